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

// TestSynonymChain checks that a word's WordNet synonyms reach the
// synonyms in everyday use of those the usage table holds, after
// WordNet's own, and that a word with no such synonym has WordNet's
// alone.
func TestSynonymChain(t *testing.T) {
	got := lexicon.SynonymChain("presentation")
	if !slices.Contains(got, "demo") || !slices.Contains(got, "demonstration") {
		t.Errorf("SynonymChain(presentation) = %q, want demonstration and, by everyday use, demo", got)
	}
	if i, j := slices.Index(got, "demonstration"), slices.Index(got, "demo"); i > j {
		t.Errorf("SynonymChain(presentation) = %q, want WordNet's synonym before the chained one", got)
	}
	if got, want := lexicon.SynonymChain("gratis"), lexicon.Synonyms("gratis"); !slices.Equal(got, want) {
		t.Errorf("SynonymChain(gratis) = %q, want WordNet's %q", got, want)
	}
	g := lexicon.NewGuards(nil, nil)
	all := func([]string) bool { return true }
	if got := g.Synonyms("presentation", []string{"presentation"}, all); !slices.ContainsFunc(got, func(p []string) bool { return slices.Equal(p, []string{lexicon.Stem("demo")}) }) {
		t.Errorf("Guards.Synonyms(presentation) = %q, want demo's stem", got)
	}
}
