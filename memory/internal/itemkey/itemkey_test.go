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

func TestEnd(t *testing.T) {
	p := Encode([]string{"a", "b"})
	for _, c := range []struct {
		ns    []string
		under bool
	}{{[]string{"a", "b"}, true}, {[]string{"a", "b", "c"}, true}, {[]string{"a", "b", "\x7f"}, true}, {[]string{"a", "b "}, false}, {[]string{"a", "b!"}, false}, {[]string{"a", "ba"}, false}, {[]string{"a"}, false}} {
		e := Encode(c.ns)
		if got := e >= p && e < End(p); got != c.under {
			t.Errorf("%q in [prefix, End(prefix)) = %v, want %v", c.ns, got, c.under)
		}
	}
}

// TestList checks a namespace listing's suffix, depth, deduplication,
// offset and limit.
func TestList(t *testing.T) {
	all := [][]string{{"a"}, {"a", "x"}, {"a", "y", "x"}, {"b", "x"}, {"b", "x", "z"}, {"c", "y"}}
	for _, c := range []struct {
		name                 string
		suffix               []string
		depth, offset, limit int
		want                 [][]string
	}{
		{"all", nil, 0, 0, 0, all},
		{"suffix", []string{"x"}, 0, 0, 0, [][]string{{"a", "x"}, {"a", "y", "x"}, {"b", "x"}}},
		{"depth 1, once each", nil, 1, 0, 0, [][]string{{"a"}, {"b"}, {"c"}}},
		{"offset and limit", nil, 1, 1, 1, [][]string{{"b"}}},
		{"limit stops", nil, 0, 0, 2, [][]string{{"a"}, {"a", "x"}}},
	} {
		l := NewList(c.suffix, c.depth, c.offset, c.limit)
		full := false
		for _, ns := range all {
			if full = l.Add(Encode(ns)); full {
				break
			}
		}
		if got := l.Namespaces(); !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if c.limit > 0 && !full {
			t.Errorf("%s: the list never said it was full", c.name)
		}
	}
}
