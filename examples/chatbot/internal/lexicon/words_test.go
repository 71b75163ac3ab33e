package lexicon_test

import (
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// TestSynonymsByWord checks that the synonym table is keyed by the word,
// not by its Porter2 stem: "busy" and "business" share the stem "busi"
// but no synonym, while an inflection still finds its word's.
func TestSynonymsByWord(t *testing.T) {
	if lexicon.Stem("busy") != lexicon.Stem("business") {
		t.Fatalf("Stem(busy) = %q, Stem(business) = %q: the case tests nothing", lexicon.Stem("busy"), lexicon.Stem("business"))
	}
	for _, c := range []struct {
		word     string
		has, not []string
	}{
		{"busy", []string{"occupy"}, []string{"business concern", "commercial enterprise"}},
		{"business", []string{"business concern"}, []string{"occupy", "fussy"}},
		{"businesses", []string{"business concern"}, []string{"occupy", "fussy"}},
		{"internal", nil, []string{"international"}},
		// A plural that is a word of its own ("viewers": "TV audience")
		// finds its singular's synonyms too.
		{"viewers", []string{"tv audience", "spectator"}, nil},
	} {
		got := lexicon.Synonyms(c.word)
		for _, w := range c.has {
			if !slices.Contains(got, w) {
				t.Errorf("Synonyms(%q) = %q, lacks %q", c.word, got, w)
			}
		}
		for _, w := range c.not {
			if slices.Contains(got, w) {
				t.Errorf("Synonyms(%q) = %q, has %q, a synonym of another word of its stem", c.word, got, w)
			}
		}
	}
}

// TestInflects checks that forms of one word are told from words that
// only share a Porter2 stem.
func TestInflects(t *testing.T) {
	for _, p := range [][2]string{{"business", "businesses"}, {"plan", "planned"}, {"policy", "policies"},
		{"price", "pricing"}, {"team", "teams"}, {"forecast", "forecasting"}, {"start", "started"}, {"acme", "acme's"},
		{"tie", "ties"}, {"tie", "tied"}, {"lie", "lies"}, {"die", "dies"}, {"movie", "movies"}, {"ties", "tied"}, {"company", "companies"}} {
		if !lexicon.Inflects(p[0], p[1]) || !lexicon.Inflects(p[1], p[0]) {
			t.Errorf("Inflects(%q, %q) = false, want true", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"busy", "business"}, {"internal", "international"}, {"generous", "generously"}, {"plan", "planet"}} {
		if lexicon.Inflects(p[0], p[1]) || lexicon.Inflects(p[1], p[0]) {
			t.Errorf("Inflects(%q, %q) = true, want false", p[0], p[1])
		}
	}
}
