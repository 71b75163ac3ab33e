package knowledge

import (
	"testing"
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
	if heldSynonymWeight >= synonymWeight {
		t.Errorf("heldSynonymWeight %v is not below synonymWeight %v", heldSynonymWeight, synonymWeight)
	}
}
