package offline

import (
	"slices"
	"strings"
	"testing"
)

// TestSpelledNumbersMatch checks that a number matches however it is
// written, in the question and in the passage, and that the search query
// carries both forms.
func TestSpelledNumbersMatch(t *testing.T) {
	for _, c := range []struct {
		w, passage string
		want       bool
	}{
		{"four", "Acme has 4 pricing tiers.", true},
		{"4", "Acme has four pricing tiers.", true},
		{"twelve", "up to 12 editors", true},
		{"twelve", "up to 120 editors", false},
		{"four", "up to 5 editors", false},
	} {
		if got := matches(c.w, tokens(c.passage)); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.w, c.passage, got, c.want)
		}
	}
	if w := relevanceWords("Which plan has 4 data sources?"); !slices.Contains(w, "4") {
		t.Errorf("relevanceWords drops the single digit: %q", w)
	}
	if q := strings.Fields(searchQuery("Which plan has twenty data sources?")); !slices.Contains(q, "20") || !slices.Contains(q, "twenty") {
		t.Errorf("searchQuery lacks a form of the number: %q", q)
	}
}
