package offline

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// TestSynonymBelowWord checks that a sentence with the question's own
// word is quoted before one with only a synonym of it, though the
// synonym's comes from the better-ranked passage: scored as the word
// itself, it would come first.
func TestSynonymBelowWord(t *testing.T) {
	rs := []result{{source: "search_knowledge", text: "2 passages for \"clients\", best first:\n\n" +
		"[1] overview § Who (score 2.00)\nAround 2,300 customers use the platform every day.\n\n" +
		"[2] api § Retry (score 1.00)\nClients use the platform's API with a key.\n"}}
	q := "How do clients use the platform?"
	ans := compose(q, rs)
	exact, syn := strings.Index(ans, "Clients use"), strings.Index(ans, "customers use")
	if exact < 0 || syn >= 0 && syn < exact {
		t.Errorf("compose(%q) quotes the synonym's sentence before the word's:\n%s", q, ans)
	}
}

// TestSynonymGuards checks that a synonym the question asks in a word
// of its own does not count for another of its words, that names and
// common words are not taken for abbreviations, and that a chat
// abbreviation matches the word it shortens.
func TestSynonymGuards(t *testing.T) {
	toks := tokens("Around 2,300 customers use the platform.")
	if e := expandWords("", []string{"clients", "customers"}, toks); e.match("clients", toks) {
		t.Errorf("\"clients\" matched \"customers\" the question asks itself")
	}
	if e := expandWords("", []string{"clients"}, toks); !e.match("clients", toks) {
		t.Errorf("\"clients\" did not match \"customers\"")
	}
	toks = tokens("Customers can request the report from their account manager.")
	if e := expandWords("", []string{"acct"}, toks); !e.match("acct", toks) {
		t.Errorf("\"acct\" did not match \"account\"")
	}
	// Each results sentence holds a WordNet synonym of the name (checked
	// first), so that only the name guard keeps the name from it.
	for _, c := range []struct{ name, synonym, sentence string }{
		{"team", "squad", "The squad meets every Monday."},
		{"forecast", "estimate", "The estimate covers the next quarter."},
		{"enterprise", "endeavor", "Migrating is a big endeavor."},
	} {
		if !slices.Contains(lexicon.Synonyms(c.name), c.synonym) {
			t.Fatalf("lexicon.Synonyms(%q) lacks %q: the case tests nothing", c.name, c.synonym)
		}
		if e := expandWords("", []string{c.name}, tokens(c.sentence)); len(e.syn)+len(e.related) != 0 {
			t.Errorf("name %q expanded to %q", c.name, e.syn[c.name])
		}
	}
	// A synonym that is a name counts for no word: "calculate" is
	// "forecast", but Forecast is a product.
	if !slices.Contains(lexicon.Synonyms("calculate"), "forecast") {
		t.Fatalf("lexicon.Synonyms(%q) lacks %q: the case tests nothing", "calculate", "forecast")
	}
	if e := expandWords("", []string{"calculate"}, tokens("Acme Forecast predicts revenue.")); len(e.syn)+len(e.related) != 0 {
		t.Errorf("\"calculate\" expanded to the product name: %q", e.syn["calculate"])
	}
}

// TestAbbreviationGuards checks that a word the question types in
// capitals is an initialism, never a chat abbreviation of the results'
// words, and that one shortening many of their words stands for none.
func TestAbbreviationGuards(t *testing.T) {
	toks := tokens("Enterprise customers get encryption keys.")
	if e := expandWords("Does Acme integrate with our ERP?", []string{"erp"}, toks); len(e.syn)+len(e.related) != 0 {
		t.Errorf("\"ERP\" expanded to %q, want nothing: it is an initialism", e.syn["erp"])
	}
	if e := expandWords("does acme integrate with our erp?", []string{"erp"}, toks); !e.match("erp", toks) {
		t.Errorf("lower-case \"erp\" did not match: the capitals guard must be what stops \"ERP\"")
	}
	toks = tokens("Accounts, accents, accesses and accelerators are accepted.")
	if e := expandWords("any accs?", []string{"accs"}, toks); len(e.syn)+len(e.related) != 0 {
		t.Errorf("\"accs\" expanded to %q, want nothing past %d words", e.syn["accs"], lexicon.MaxAbbreviated)
	}
}

// TestSynonymAsWritten checks that a word is found in its synonym group
// as written when its stem is shorter than the group's ("promise" stems
// to "prom").
func TestSynonymAsWritten(t *testing.T) {
	group := []string{"guarant", "commitm", "promis"}
	for w, want := range map[string]bool{"promise": true, "promised": true, "promises": true, "guarantee": true,
		"commitment": true, "prompt": false, "prom": false, "program": false} {
		if got := inGroup(w, group); got != want {
			t.Errorf("inGroup(%q) = %v, want %v", w, got, want)
		}
	}
}

// TestSynonymNameStems checks that a synonym whose stem is a name's is
// no synonym, since results words match by their stems: "occupied" is
// "busy", which stems as the Business plan does, and "foretelling" is
// "forecasting", a form of the product Forecast. Another synonym of each
// still matches.
func TestSynonymNameStems(t *testing.T) {
	for _, c := range []struct{ word, name, other string }{
		{"occupied", "The Business plan adds phone support on weekends.", "Agents reside in Lisbon."},
		{"foretelling", "Forecasting is part of Acme Forecast.", "Each prediction has a range."},
	} {
		if toks := tokens(c.name); expandWords("", []string{c.word}, toks).match(c.word, toks) || matches(c.word, toks) {
			t.Errorf("%q matched %q by a synonym sharing a name's stem", c.word, c.name)
		}
		if toks := tokens(c.other); !expandWords("", []string{c.word}, toks).match(c.word, toks) {
			t.Errorf("%q did not match its synonym in %q", c.word, c.other)
		}
	}
	q := "Are your support agents occupied on weekends?"
	rs := []result{{source: "search_knowledge", text: "The Business plan adds phone support on weekends."}}
	if _, missing := cover(q, rs); !slices.Contains(missing, "occupied") {
		t.Errorf("cover(%q) finds every word but %q: \"occupied\" is no Business", q, missing)
	}
}
