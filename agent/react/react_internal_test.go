package react

import (
	"regexp"
	"testing"
)

// TestNewIDs checks the batched ids against model.NewID's form and that
// they differ, for batches held on the stack and larger ones.
func TestNewIDs(t *testing.T) {
	form := regexp.MustCompile(`^m-[0-9a-f]{16}$`)
	for _, n := range []int{1, 3, 4, 9} {
		ids := newIDs(n)
		if len(ids) != n*idLen {
			t.Fatalf("newIDs(%d) has length %d, want %d", n, len(ids), n*idLen)
		}
		seen := map[string]bool{}
		for i := range n {
			id := ids[i*idLen : (i+1)*idLen]
			if !form.MatchString(id) {
				t.Errorf("newIDs(%d)[%d] = %q, not of the form m-<16 hex digits>", n, i, id)
			}
			if seen[id] {
				t.Errorf("newIDs(%d) repeats %q", n, id)
			}
			seen[id] = true
		}
	}
}
