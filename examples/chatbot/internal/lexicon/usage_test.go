package lexicon_test

import (
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// TestUsage checks the synonyms in everyday use: of a word and of its
// inflections, never the word's own forms, none for a word of no group,
// and a hyphenated word as the phrase a search tokenizes it to.
func TestUsage(t *testing.T) {
	for _, c := range []struct{ word, want string }{
		{"staff", "employee"},
		{"employees", "staff"},
		{"charities", "non profit"},
		{"downtime", "outage"},
		{"demonstration", "demo"},
	} {
		if got := lexicon.Usage(c.word); !slices.Contains(got, c.want) {
			t.Errorf("Usage(%q) = %q, want it to hold %q", c.word, got, c.want)
		}
	}
	if got := lexicon.Usage("employee"); slices.Contains(got, "employees") || slices.Contains(got, "employee") {
		t.Errorf("Usage(employee) = %q, holds a form of the word", got)
	}
	// A word is looked up by its form or plural, not its stem: words that
	// share a stem with a word of the table mean something else.
	for _, w := range []string{"planet", "found", "organ", "organize", "available", "avail", "refund", "compensation", "incorporate"} {
		if got := lexicon.Usage(w); got != nil {
			t.Errorf("Usage(%q) = %q, want none", w, got)
		}
	}
	if got := lexicon.Usage("planet"); got != nil {
		t.Errorf("Usage(planet) = %q, want none", got)
	}
}

// TestGuardsUsage checks that the guards pass a synonym in everyday use
// only where the searched text holds it, and never one that is a name of
// the documents' own.
func TestGuardsUsage(t *testing.T) {
	g := lexicon.NewGuards([]string{"trial"}, nil)
	all := func([]string) bool { return true }
	if got := g.Usage("staff", []string{"staff"}, all); !slices.ContainsFunc(got, func(p []string) bool { return slices.Equal(p, []string{lexicon.Stem("employee")}) }) {
		t.Errorf("Usage(staff) = %q, want employee's stem", got)
	}
	if got := g.Usage("staff", []string{"staff"}, func([]string) bool { return false }); got != nil {
		t.Errorf("Usage(staff) over a text that holds none = %q, want none", got)
	}
	if got := g.Usage("evaluation", []string{"evaluation"}, all); slices.ContainsFunc(got, func(p []string) bool { return slices.Contains(p, lexicon.Stem("trial")) }) {
		t.Errorf("Usage(evaluation) = %q, holds the name trial", got)
	}
}
