package lexicon_test

import (
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// TestGuards checks each guard of lexicon.Guards on a case its synonym
// table would otherwise expand (checked first).
func TestGuards(t *testing.T) {
	g := lexicon.NewGuards([]string{"Team", "pipelines", "forecast"}, func(w string) bool { return w == "the" || w == "with" })
	holdsAll := func([]string) bool { return true }
	has := func(syn [][]string, stems ...string) bool {
		return slices.ContainsFunc(syn, func(p []string) bool { return slices.Equal(p, stems) })
	}
	// Names and their inflections are not expanded; a word of a name's
	// stem that is no form of it is.
	for _, w := range []string{"team", "teams", "pipeline", "forecast"} {
		if len(lexicon.Synonyms(w)) == 0 {
			t.Fatalf("Synonyms(%q) is empty: the case tests nothing", w)
		}
		if !g.Name(w) || g.Expandable(w) || g.Anchors(w) || len(g.Synonyms(w, []string{w}, holdsAll)) != 0 {
			t.Errorf("name %q: Name %v, Expandable %v, Anchors %v, Synonyms %q", w, g.Name(w), g.Expandable(w), g.Anchors(w), g.Synonyms(w, []string{w}, holdsAll))
		}
	}
	if !g.Expandable("clients") || !g.Anchors("clients") || g.Expandable("the") || g.Anchors("with") {
		t.Errorf("Expandable/Anchors of a common word or a function word is wrong")
	}
	// A synonym that is a name is left out: "calculate" is "forecast".
	if syn := g.Synonyms("calculate", []string{"calculate"}, holdsAll); !slices.Contains(lexicon.Synonyms("calculate"), "forecast") || has(syn, "forecast") {
		t.Errorf("Synonyms(calculate) = %q, want no %q (a name)", syn, "forecast")
	}
	// A one-word synonym of a short stem is left out: "allow" is "let".
	if syn := g.Synonyms("allow", []string{"allow"}, holdsAll); !slices.Contains(lexicon.Synonyms("allow"), "let") || has(syn, "let") {
		t.Errorf("Synonyms(allow) = %q, want no %q (a short word)", syn, "let")
	}
	// A synonym the question asks in a word of its own counts for that
	// word, and one the searched text does not hold counts for none.
	if syn := g.Synonyms("clients", []string{"clients"}, holdsAll); !has(syn, "custom") {
		t.Errorf("Synonyms(clients) = %q, want %q", syn, "custom")
	}
	if syn := g.Synonyms("clients", []string{"clients", "customers"}, holdsAll); has(syn, "custom") {
		t.Errorf("Synonyms(clients) beside \"customers\" = %q, want no %q", syn, "custom")
	}
	if syn := g.Synonyms("clients", []string{"clients"}, func([]string) bool { return false }); len(syn) != 0 {
		t.Errorf("Synonyms(clients) over text holding none = %q, want none", syn)
	}
	// At most MaxExpanded.
	for _, w := range []string{"set", "run", "take", "make", "break", "cut", "head", "line", "point"} {
		if syn := g.Synonyms(w, []string{w}, holdsAll); len(syn) > lexicon.MaxExpanded {
			t.Errorf("Synonyms(%q) has %d, want at most %d", w, len(syn), lexicon.MaxExpanded)
		}
	}
}
