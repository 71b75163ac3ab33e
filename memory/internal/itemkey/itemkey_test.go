package itemkey

import (
	"slices"
	"sort"
	"testing"
)

func TestOrderIsLabelByLabel(t *testing.T) {
	want := [][]string{{"a"}, {"a", "b"}, {"a", "b", "c"}, {"a", "b-x"}, {"a-x"}, {"ab"}, {"b"}}
	enc := make([]string, len(want))
	for i, ns := range want {
		enc[len(want)-1-i] = Encode(ns)
	}
	sort.Strings(enc)
	for i, e := range enc {
		if got := Decode(e); !slices.Equal(got, want[i]) {
			t.Errorf("sorted position %d holds %q, want %q", i, got, want[i])
		}
	}
}

func TestPrefixSuffixTruncate(t *testing.T) {
	ns := Encode([]string{"users", "u1", "prefs"})
	for _, c := range []struct {
		prefix []string
		want   bool
	}{{nil, true}, {[]string{"users"}, true}, {[]string{"users", "u1"}, true}, {[]string{"users", "u"}, false}, {[]string{"user"}, false}} {
		if got := len(ns) >= len(Encode(c.prefix)) && ns[:len(Encode(c.prefix))] == Encode(c.prefix); got != c.want {
			t.Errorf("prefix %q: %v, want %v", c.prefix, got, c.want)
		}
	}
	for _, c := range []struct {
		suffix []string
		want   bool
	}{{nil, true}, {[]string{"prefs"}, true}, {[]string{"u1", "prefs"}, true}, {[]string{"refs"}, false}, {[]string{"users", "u1", "prefs"}, true}, {[]string{"x", "users", "u1", "prefs"}, false}} {
		if got := HasSuffix(ns, Encode(c.suffix)); got != c.want {
			t.Errorf("suffix %q: %v, want %v", c.suffix, got, c.want)
		}
	}
	for depth, want := range [][]string{{"users", "u1", "prefs"}, {"users"}, {"users", "u1"}, {"users", "u1", "prefs"}, {"users", "u1", "prefs"}} {
		if got := Decode(Truncate(ns, depth)); !slices.Equal(got, want) {
			t.Errorf("Truncate(%d) = %q, want %q", depth, got, want)
		}
	}
	if Decode("") != nil {
		t.Error("Decode of no labels is not nil")
	}
}
