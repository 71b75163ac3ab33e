package knowledge

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/bm25"
)

// guardedKB returns a knowledge base of one passage a text, indexed and
// guarded as New does.
func guardedKB(t *testing.T, texts ...string) *kb {
	t.Helper()
	k := &kb{}
	var docs []bm25.Document
	for i, text := range texts {
		k.passages = append(k.passages, passage{text: text})
		docs = append(docs, bm25.Document{ID: fmt.Sprint("d#", i), Text: text})
	}
	ix, err := bm25.New(docs, bm25.Params{})
	if err != nil {
		t.Fatal(err)
	}
	k.index, k.guards = ix, guardsOf(k.passages)
	return k
}

// searchFor ranks k's passages against query as search_knowledge does.
func (k *kb) searchFor(query string) []bm25.Hit {
	own, extra := k.searchTerms(query)
	return k.index.SearchTerms(own, extra, MaxTopK)
}

// TestSearchSynonymGuards checks that the knowledge server's synonyms
// pass the guards of the offline model's (lexicon.Guards): a synonym
// counts only in a passage holding a word the query asks that is no
// name, a name of the documents' own (a word they capitalise within
// sentences) is never a synonym, and a short synonym is not searched.
// Each case holds a WordNet synonym (checked first), so that only its
// guard stops it.
func TestSearchSynonymGuards(t *testing.T) {
	for _, p := range [][2]string{{"clients", "customer"}, {"squad", "team"}, {"allow", "let"}} {
		if !slices.Contains(lexicon.Synonyms(p[0]), p[1]) {
			t.Fatalf("lexicon.Synonyms(%q) lacks %q: the case tests nothing", p[0], p[1])
		}
	}
	k := guardedKB(t,
		"Around 2,300 customers use the platform every day.",
		"Customers can be billed annually.",
		"The Team plan costs $49. Every Team workspace has an owner.",
	)
	// Beside an asked word the passage holds: found.
	if hits := k.searchFor("How many clients use the platform?"); len(hits) == 0 || hits[0].Index != 0 {
		t.Errorf("\"clients use the platform\" found %v, want passage 0 first", hits)
	}
	// Alone: "clients" is "customers", but no passage holds another
	// word of the query, so the synonym finds nothing.
	if hits := k.searchFor("how many clients"); len(hits) != 0 {
		t.Errorf("\"how many clients\" found %v, want nothing: a synonym alone finds no passage", hits)
	}
	// Beside a name only: the synonym does not add to the name's score.
	named, alone := k.searchFor("Team clients"), k.searchFor("Team")
	if len(named) != 1 || len(alone) != 1 || named[0].Score != alone[0].Score {
		t.Errorf("\"Team clients\" found %v, want only \"Team\"'s %v: a synonym counts only beside a word that is no name", named, alone)
	}
	// A name of the documents' own is no synonym: "squad" is "team",
	// but Team is a plan.
	if got := k.synonymTerms("what does a squad cost"); slices.ContainsFunc(got, func(x bm25.Term) bool { return x.Text == bm25.Stem("team") }) {
		t.Errorf("synonymTerms(\"what does a squad cost\") = %v, searches the plan name %q", got, "team")
	}
	// A short synonym is not searched: "allow" is "let".
	k = guardedKB(t, "Admins let viewers export reports.")
	if got := k.synonymTerms("do admins allow exports"); slices.ContainsFunc(got, func(x bm25.Term) bool { return x.Text == "let" }) {
		t.Errorf("synonymTerms = %v, searches the short word %q", got, "let")
	}
}
