package knowledge

import (
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/bm25"
)

// TestSearchUsageSynonyms checks that a synonym in everyday use
// (lexicon.Usage: "staff" is "employees") finds a passage that holds no
// other word of the query, which a WordNet synonym does not, and that it
// counts below the query's own word.
func TestSearchUsageSynonyms(t *testing.T) {
	k := guardedKB(t,
		"The company was founded in Lisbon.",
		"It has about 140 employees in three offices.",
	)
	if hits := k.searchFor("How big is the staff?"); len(hits) == 0 || hits[0].Index != 1 {
		t.Errorf("\"staff\" ranked %v, want passage 1 (employees) first", hits)
	}
	k = guardedKB(t,
		"About 140 employees work here.",
		"The staff room is on the second floor.",
	)
	if hits := k.searchFor("Where is the staff room?"); len(hits) == 0 || hits[0].Index != 1 {
		t.Errorf("\"staff room\" ranked %v, want passage 1, the query's own words, first", hits)
	}
}

// TestSearchHeldWordSynonyms checks that a query word the passages hold
// in another sense ("test changes") searches its one-word synonyms too
// ("trial"), beside a word of the query, below the word itself.
func TestSearchHeldWordSynonyms(t *testing.T) {
	k := guardedKB(t,
		"Viewers are free.",
		"Every plan starts with a 14-day free trial.",
		"Sandbox workspaces let teams test changes before publishing them.",
	)
	hits := k.searchFor("Can I test it for free?")
	rank := map[int]int{}
	for i, h := range hits {
		rank[h.Index] = i + 1
	}
	if rank[1] == 0 || rank[0] != 0 && rank[1] > rank[0] {
		t.Errorf("\"test it for free\" ranked %v, want passage 1 (free trial) above passage 0 (free alone)", hits)
	}
}

// TestSearchUsagePhrase checks that a synonym in everyday use of several
// words ("data source" of "connector") counts only in a passage holding a
// word of the query: its words alone ("data") mean what they mean.
func TestSearchUsagePhrase(t *testing.T) {
	k := guardedKB(t,
		"Data from each source is stored in the region you choose.",
		"The platform has 120 connectors.",
	)
	for _, h := range k.searchFor("Which connector do you recommend?") {
		if h.Index == 0 {
			t.Errorf("\"connector\" found %v, want no passage that holds only \"data\"", k.searchFor("Which connector do you recommend?"))
		}
	}
}

// TestSearchNoSynonymChain checks that a query word whose WordNet synonym
// the usage table holds in another sense searches none of that synonym's
// usage words: "accessibility" is WordNet's "availability", but not the
// "uptime" of a service.
func TestSearchNoSynonymChain(t *testing.T) {
	k := guardedKB(t,
		"Business customers are covered by a 99.9% monthly uptime commitment.",
		"Dashboards follow accessibility guidelines.",
	)
	_, extra := k.searchTerms("What accessibility commitment do Business customers get?")
	for _, e := range extra {
		if e.Text == bm25.Stem("uptime") {
			t.Errorf("searchTerms(accessibility) searches %q (%v)", e.Text, extra)
		}
	}
}
