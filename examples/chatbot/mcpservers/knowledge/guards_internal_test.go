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
	// but Team is a plan; where "team" is a common word, it is searched.
	hasTerm := func(ts []bm25.Term, w string) bool {
		return slices.ContainsFunc(ts, func(x bm25.Term) bool { return x.Text == bm25.Stem(w) })
	}
	if got := k.synonymTerms("what does a squad cost"); hasTerm(got, "team") {
		t.Errorf("synonymTerms(\"what does a squad cost\") = %v, searches the plan name %q", got, "team")
	}
	if got := guardedKB(t, "Every team has an owner, and the team sets the cost.").synonymTerms("what does a squad cost"); !hasTerm(got, "team") {
		t.Errorf("synonymTerms(\"what does a squad cost\") over a lower-case team = %v, want %q", got, "team")
	}
	// A short synonym is not searched: "allow" is "let"; its longer
	// synonym "permit" is.
	k = guardedKB(t, "Admins let viewers export reports.", "Owners permit exports of dashboards.")
	if got := k.synonymTerms("do admins allow exports"); hasTerm(got, "let") || !hasTerm(got, "permit") {
		t.Errorf("synonymTerms = %v, want %q and no short %q", got, "permit", "let")
	}
}

// TestSearchStopWords checks that the knowledge server's function words
// are the offline model's (lexicon.StopWord): "need" anchors no synonym,
// so "overcast" searching "cloud" adds nothing to the passage "need"
// finds, while a content word of the query ("tenant") does anchor it.
func TestSearchStopWords(t *testing.T) {
	if !slices.Contains(lexicon.Synonyms("overcast"), "cloud") {
		t.Fatalf("lexicon.Synonyms(%q) lacks %q: the case tests nothing", "overcast", "cloud")
	}
	k := guardedKB(t,
		"Acme Analytics is a cloud service only. Enterprise customers who need isolation get a dedicated tenant.",
		"Dashboards refresh every hour.",
	)
	asked, alone := k.searchFor("Do I need an umbrella if it's overcast?"), k.searchFor("Do I need an umbrella?")
	if len(asked) != 1 || len(alone) != 1 || asked[0].Score != alone[0].Score {
		t.Errorf("\"need ... overcast\" found %v, want \"need\"'s %v: a synonym counts beside no function word", asked, alone)
	}
	tenant, tenantAlone := k.searchFor("is the tenant overcast"), k.searchFor("is the tenant")
	if len(tenant) != 1 || len(tenantAlone) != 1 || tenant[0].Score <= tenantAlone[0].Score {
		t.Errorf("\"tenant overcast\" found %v, want more than \"tenant\"'s %v: the synonym counts beside a content word", tenant, tenantAlone)
	}
	// A chat abbreviation's words count beside the query's own too.
	k = guardedKB(t, "Each account has one owner.", "Billing is monthly.")
	if hits := k.searchFor("acct"); len(hits) != 0 {
		t.Errorf("\"acct\" found %v, want nothing: an abbreviation's word alone finds no passage", hits)
	}
	if hits := k.searchFor("acct owner"); len(hits) == 0 || hits[0].Index != 0 {
		t.Errorf("\"acct owner\" found %v, want passage 0", hits)
	}
}

// TestSearchPhraseSynonyms checks that a synonym of several words is
// searched by its words the index holds: "acquire" is "take on", which
// the index holds as "take".
func TestSearchPhraseSynonyms(t *testing.T) {
	if !slices.Contains(lexicon.Synonyms("acquire"), "take on") {
		t.Fatalf("lexicon.Synonyms(%q) lacks %q: the case tests nothing", "acquire", "take on")
	}
	k := guardedKB(t, "Each workspace can take on five more projects.", "Billing is monthly.")
	if got := k.synonymTerms("can a workspace acquire projects"); !slices.ContainsFunc(got, func(x bm25.Term) bool { return x.Text == "take" && x.Beside }) {
		t.Errorf("synonymTerms = %v, want %q (of \"take on\") beside the query's words", got, "take")
	}
}
