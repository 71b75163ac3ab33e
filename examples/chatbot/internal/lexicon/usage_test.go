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

// TestNoSynonymChain checks that a WordNet synonym of a question word
// in another sense than the usage table's is no way into the table:
// "accessibility" is "availability" in WordNet, which the table makes
// "uptime" in the sense of a service's; "valuation" is "evaluation",
// which the table makes a "trial"; and that a word everyday use says for
// another is listed in the table itself ("presentation" of "demo").
func TestNoSynonymChain(t *testing.T) {
	g := lexicon.NewGuards(nil, nil)
	all := func([]string) bool { return true }
	for _, tt := range []struct {
		w     string
		link  string   // the WordNet synonym that once chained, checked first
		never []string // usage words of link, in its table sense
	}{
		{"accessibility", "availability", []string{"uptime"}},
		{"valuation", "evaluation", []string{"trial", "tryout"}},
	} {
		if !slices.Contains(lexicon.Synonyms(tt.w), tt.link) {
			t.Fatalf("Synonyms(%s) = %q, want WordNet's %s: the case tests nothing", tt.w, lexicon.Synonyms(tt.w), tt.link)
		}
		reached := slices.Concat(g.Synonyms(tt.w, []string{tt.w}, all), g.Usage(tt.w, []string{tt.w}, all), g.Related(tt.w, []string{tt.w}, all))
		for _, u := range tt.never {
			if slices.ContainsFunc(reached, func(p []string) bool { return slices.Contains(p, lexicon.Stem(u)) }) {
				t.Errorf("guards reach %s from %s: %q", u, tt.w, reached)
			}
		}
	}
	if got := g.Usage("presentation", []string{"presentation"}, all); !slices.ContainsFunc(got, func(p []string) bool { return slices.Equal(p, []string{lexicon.Stem("demo")}) }) {
		t.Errorf("Guards.Usage(presentation) = %q, want demo's stem", got)
	}
}

// TestUsageBeside checks the groups that hold their sense only beside a
// word of their context: "refund" is a service credit in a question
// about downtime, not in one about cancelling, and never by Usage alone;
// and that a phrase of the table is a key by its form and its last
// word's plural.
func TestUsageBeside(t *testing.T) {
	if got := lexicon.UsageBeside("refund", []string{"refund", "downtime"}); !slices.Contains(got, "credit") {
		t.Errorf("UsageBeside(refund, downtime) = %q, want it to hold credit", got)
	}
	if got := lexicon.UsageBeside("refunds", []string{"refunds", "outages"}); !slices.Contains(got, "credit") {
		t.Errorf("UsageBeside(refunds, outages) = %q, want it to hold credit", got)
	}
	for _, asked := range [][]string{{"refund", "cancel"}, {"refund"}} {
		if got := lexicon.UsageBeside("refund", asked); slices.Contains(got, "credit") {
			t.Errorf("UsageBeside(refund, %q) = %q, want no credit", asked, got)
		}
	}
	if got := lexicon.UsageBeside("staff", nil); !slices.Contains(got, "employee") {
		t.Errorf("UsageBeside(staff) = %q, want the usage group", got)
	}
	for _, p := range []string{"bank card", "bank cards"} {
		if got := lexicon.Usage(p); !slices.Contains(got, "credit card") {
			t.Errorf("Usage(%q) = %q, want it to hold credit card", p, got)
		}
	}
	g := lexicon.NewGuards(nil, nil)
	all := func([]string) bool { return true }
	want := []string{lexicon.Stem("credit"), lexicon.Stem("card")}
	if got := g.Phrase("bank", "cards", []string{"bank", "cards"}, all); !slices.ContainsFunc(got, func(p []string) bool { return slices.Equal(p, want) }) {
		t.Errorf("Phrase(bank, cards) = %q, want credit card", got)
	}
}

// TestUsageEverydayWords checks groups of everyday words a question
// about a software service says for its documents' words: "snapshots"
// for "backups", "graphs" for "charts", "erased" for "deleted", "shut
// down" for "close", and "calls" for "requests" only beside a word of
// an API's limits.
func TestUsageEverydayWords(t *testing.T) {
	for _, c := range []struct{ word, want string }{
		{"snapshots", "backup"},
		{"graphs", "chart"},
		{"erased", "deleted"},
		{"wiped", "deleted"},
		{"shut down", "close"},
		{"lessons", "course"},
		{"cap", "limit"},
	} {
		if got := lexicon.Usage(c.word); !slices.Contains(got, c.want) {
			t.Errorf("Usage(%q) = %q, want it to hold %q", c.word, got, c.want)
		}
	}
	if got := lexicon.UsageBeside("calls", []string{"calls", "minute", "api"}); !slices.Contains(got, "request") {
		t.Errorf("UsageBeside(calls, minute) = %q, want request", got)
	}
	if got := lexicon.UsageBeside("calls", []string{"calls", "onboarding"}); slices.Contains(got, "request") {
		t.Errorf("UsageBeside(calls, onboarding) = %q, want no request", got)
	}
}
