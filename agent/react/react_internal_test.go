package react

import (
	"regexp"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
)

// TestNewIDs checks the batched ids against model.NewID's form and that
// they differ, for batches held in the turn and larger ones.
func TestNewIDs(t *testing.T) {
	form := regexp.MustCompile(`^m-[0-9a-f]{16}$`)
	for _, n := range []int{1, 3, 4, 9} {
		ids := new(turn).newIDs(n)
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

// A turn's ids are written in the turn itself when they fit: up to
// 1+inlineCalls of them allocate nothing, more allocate once.
func TestNewIDsInTurn(t *testing.T) {
	tn := new(turn)
	for n, want := range map[int]float64{1: 0, 1 + inlineCalls: 0, 2 + inlineCalls: 1} {
		if got := testing.AllocsPerRun(100, func() { _ = tn.newIDs(n) }); got != want {
			t.Errorf("newIDs(%d) allocates %v times, want %v", n, got, want)
		}
	}
	if ids := tn.newIDs(0); ids != "" {
		t.Errorf("newIDs(0) = %q, want \"\"", ids)
	}
}

// Input holds the message, its part and its id's text in one allocation,
// and each input's id is a fresh one of model.NewID's form.
func TestInputAllocatesOnce(t *testing.T) {
	var s State
	if n := testing.AllocsPerRun(100, func() { s = Input("compute please") }); n != 1 {
		t.Errorf("Input allocates %v times, want 1", n)
	}
	form := regexp.MustCompile(`^m-[0-9a-f]{16}$`)
	a, b := Input("a"), Input("b")
	for _, in := range []State{a, b, s} {
		if len(in.Messages) != 1 || !form.MatchString(in.Messages[0].ID) || in.Messages[0].Role != model.RoleUser {
			t.Fatalf("Input gave %+v, want one user message with an id of the form m-<16 hex digits>", in.Messages)
		}
	}
	if a.Messages[0].ID == b.Messages[0].ID || a.Messages[0].Text() != "a" || b.Messages[0].Text() != "b" {
		t.Errorf("two inputs: %+v and %+v", a.Messages[0], b.Messages[0])
	}
}
