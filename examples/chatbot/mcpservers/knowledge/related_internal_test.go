package knowledge

import (
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// TestSearchRelatedWords checks that a query word no passage holds
// searches the words WordNet relates to it one step away (a more general
// noun: "folks" is "people") and the one word its phrase stands for
// ("price reduction" is "discount"), beside a word the query asks that
// the passage holds, and that a related word counts below a synonym.
func TestSearchRelatedWords(t *testing.T) {
	if !slices.Contains(lexicon.Related("folks"), "people") || !slices.Contains(lexicon.PhraseSynonyms("price", "reduction"), "discount") {
		t.Fatal("lexicon lacks folks → people or price reduction → discount: the case tests nothing")
	}
	k := guardedKB(t,
		"Live training sessions are held monthly.",
		"Live training sessions for up to 20 people are included in the Business plan.",
	)
	if hits := k.searchFor("How many folks can attend a live training session?"); len(hits) < 2 || hits[0].Index != 1 {
		t.Errorf("\"folks ... live training\" ranked %v, want passage 1 (people) first", hits)
	}
	k = guardedKB(t,
		"The price is public.",
		"Schools get a 40% discount on the price of the Team and Business plans.",
	)
	if hits := k.searchFor("Is there a price reduction for charities?"); len(hits) < 2 || hits[0].Index != 1 {
		t.Errorf("\"price reduction\" ranked %v, want passage 1 (discount) first", hits)
	}
	// A related word alone finds nothing: "folks" is "people", but the
	// passage holds no other word of the query.
	k = guardedKB(t, "Up to 20 people can join.")
	if hits := k.searchFor("how many folks"); len(hits) != 0 {
		t.Errorf("\"how many folks\" found %v, want nothing", hits)
	}
	if relatedWeight >= synonymWeight {
		t.Errorf("relatedWeight %v is not below synonymWeight %v", relatedWeight, synonymWeight)
	}
}
