package lexicon_test

import (
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// TestSisterPhrases checks that phrases whose first one-word synonym is
// the same stand for one another, and those that share a later one do
// not.
func TestSisterPhrases(t *testing.T) {
	if got := lexicon.SisterPhrases("charge", "cards"); !slices.Contains(got, "credit card") {
		t.Errorf(`SisterPhrases("charge", "cards") = %q, want "credit card" among them`, got)
	}
	if got := lexicon.SisterPhrases("price", "reduction"); slices.Contains(got, "brush aside") {
		t.Errorf(`SisterPhrases("price", "reduction") = %q, want no "brush aside" ("discount" is its later sense)`, got)
	}
}

// TestGuardsPhraseModifier checks that a phrase with no one-word synonym
// of its own finds that of the phrase of its modifier's synonym ("cost
// reduction" is "price reduction", "discount").
func TestGuardsPhraseModifier(t *testing.T) {
	g := lexicon.NewGuards([]string{"team"}, nil)
	all := func([]string) bool { return true }
	got := g.Phrase("cost", "reduction", []string{"charities", "cost", "reduction"}, all)
	if !slices.ContainsFunc(got, func(p []string) bool { return slices.Equal(p, []string{"discount"}) }) {
		t.Errorf(`Phrase("cost", "reduction") = %q, want "discount" among them`, got)
	}
}

// TestUsageBySynset checks that a word WordNet relates to nothing of its
// own takes the usage group of what its synonyms are related to, and a
// word whose synonym only is in a group of another sense does not.
func TestUsageBySynset(t *testing.T) {
	if got := lexicon.Usage("workforce"); !slices.Contains(got, "employee") {
		t.Errorf(`Usage("workforce") = %q, want "employee" among them`, got)
	}
	for _, w := range []string{"steady", "test", "show", "hire"} {
		if got := lexicon.Usage(w); got != nil {
			t.Errorf("Usage(%q) = %q, want none", w, got)
		}
	}
}

// TestPhraseSynonymsInflectedVerb checks that a phrasal verb is found in
// the third person.
func TestPhraseSynonymsInflectedVerb(t *testing.T) {
	if got := lexicon.PhraseSynonyms("goes", "down"); !slices.Contains(got, "fall") {
		t.Errorf(`PhraseSynonyms("goes", "down") = %q, want "fall" among them`, got)
	}
}

// TestGuardsIdiom checks that an adverb of two words, a function word
// and a word, stands for the synonyms of the phrase.
func TestGuardsIdiom(t *testing.T) {
	g := lexicon.NewGuards([]string{"enterprise"}, nil)
	all := func([]string) bool { return true }
	got := g.Idiom("per", "annum", []string{"enterprise", "annum"}, all)
	if !slices.ContainsFunc(got, func(p []string) bool { return slices.Equal(p, []string{"annual"}) }) {
		t.Errorf(`Idiom("per", "annum") = %q, want "annual" (of "annually") among them`, got)
	}
	if got := g.Idiom("per", "month", []string{"month"}, all); got != nil {
		t.Errorf(`Idiom("per", "month") = %q, want none`, got)
	}
}
