package lexicon_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// TestGuards checks each guard of lexicon.Guards on a case its synonym
// table would otherwise expand (checked first).
func TestGuards(t *testing.T) {
	g := lexicon.NewGuards([]string{"Team", "pipelines", "forecast"}, nil)
	holdsAll := func([]string) bool { return true }
	has := func(syn [][]string, stems ...string) bool {
		return slices.ContainsFunc(syn, func(p []string) bool { return slices.Equal(p, stems) })
	}
	// Names and their inflections are not expanded; a word of a name's
	// stem that is no form of it is.
	for _, w := range []string{"team", "teams", "pipeline", "forecast", "forecasting", "forecasts"} {
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
	// At most MaxExpanded, of words with more that pass the guards.
	capped := 0
	for _, w := range []string{"set", "run", "discovered", "threatening", "elucidate", "repress", "apprehend"} {
		syn := g.Synonyms(w, []string{w}, holdsAll)
		if len(syn) > lexicon.MaxExpanded {
			t.Errorf("Synonyms(%q) has %d, want at most %d", w, len(syn), lexicon.MaxExpanded)
		}
		if len(syn) == lexicon.MaxExpanded && len(lexicon.Synonyms(w)) > lexicon.MaxExpanded+2 {
			capped++
		}
	}
	if capped == 0 {
		t.Errorf("no word reached MaxExpanded: the bound is not tested")
	}
}

// TestGuardsNameStems checks that a synonym sharing a name's stem is left
// out, since the searched text matches words by their stems, while a
// question word sharing only a name's stem is still expanded: "occupied"
// is "busy", which stems as "Business" does, and "foretelling" is
// "forecasting", a form of the product Forecast.
func TestGuardsNameStems(t *testing.T) {
	g := lexicon.NewGuards([]string{"Business", "Forecast"}, nil)
	holdsAll := func([]string) bool { return true }
	has := func(syn [][]string, stem string) bool {
		return slices.ContainsFunc(syn, func(p []string) bool { return slices.Contains(p, stem) })
	}
	for _, c := range []struct{ word, synonym, name, other string }{
		{"occupied", "busy", "business", "reside"},
		{"foretelling", "forecasting", "forecast", "prediction"},
	} {
		if !slices.Contains(lexicon.Synonyms(c.word), c.synonym) || lexicon.Stem(c.synonym) != lexicon.Stem(c.name) {
			t.Fatalf("Synonyms(%q) lacks %q, or it does not stem as %q: the case tests nothing", c.word, c.synonym, c.name)
		}
		syn := g.Synonyms(c.word, []string{c.word}, holdsAll)
		if has(syn, lexicon.Stem(c.synonym)) {
			t.Errorf("Synonyms(%q) = %q, holds %q, the stem of the name %q", c.word, syn, lexicon.Stem(c.synonym), c.name)
		}
		if !has(syn, lexicon.Stem(c.other)) {
			t.Errorf("Synonyms(%q) = %q, want %q: only the name's stem is left out", c.word, syn, lexicon.Stem(c.other))
		}
	}
	// The question word itself is a name only as a form of one.
	if g.Name("busy") || !g.Expandable("busy") || !g.Name("businesses") {
		t.Errorf("Name(busy) = %v, Name(businesses) = %v: want false, true", g.Name("busy"), g.Name("businesses"))
	}
}

// TestGuardsPhrases checks that a synonym of several words is matched by
// the terms the searched text reduces it to, and needs a word that is no
// function word: an index without stop words holds "take on" as "take",
// and "give up" (of "abandon") is all function words.
func TestGuardsPhrases(t *testing.T) {
	for _, p := range [][2]string{{"acquire", "take on"}, {"abandon", "give up"}} {
		if !slices.Contains(lexicon.Synonyms(p[0]), p[1]) {
			t.Fatalf("Synonyms(%q) lacks %q: the case tests nothing", p[0], p[1])
		}
	}
	dropOn := func(x string) []string {
		var out []string
		for _, w := range strings.Fields(x) {
			if w != "on" {
				out = append(out, lexicon.Stem(w))
			}
		}
		return out
	}
	var asked [][]string
	g := lexicon.NewGuards(nil, dropOn)
	syn := g.Synonyms("acquire", []string{"acquire"}, func(p []string) bool { asked = append(asked, p); return !slices.Contains(p, "on") })
	if !slices.ContainsFunc(syn, func(p []string) bool { return slices.Equal(p, []string{"take"}) }) {
		t.Errorf("Synonyms(acquire) = %q (held asked %q), want [take] of \"take on\"", syn, asked)
	}
	syn = lexicon.NewGuards(nil, nil).Synonyms("abandon", []string{"abandon"}, func([]string) bool { return true })
	if slices.ContainsFunc(syn, func(p []string) bool { return slices.Contains(p, "give") }) {
		t.Errorf("Synonyms(abandon) = %q, want no \"give up\": all its words are function words", syn)
	}
}
