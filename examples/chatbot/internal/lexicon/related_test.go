package lexicon_test

import (
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// TestRelated checks the words one step away in WordNet: a noun's more
// general and more specific words, a word's derived forms, of the word
// an inflection is of, and never another form of the word itself.
func TestRelated(t *testing.T) {
	for _, c := range []struct{ word, want string }{
		{"folks", "people"},        // a more general noun
		{"reduction", "discount"},  // a more specific one
		{"reductions", "discount"}, // of the word it inflects
		{"founded", "founder"},     // a derived form
		{"founded", "foundation"},
	} {
		if got := lexicon.Related(c.word); !slices.Contains(got, c.want) {
			t.Errorf("Related(%q) = %q, want %q among them", c.word, got, c.want)
		}
	}
	for _, w := range []string{"founded", "reduction", "folks"} {
		for _, r := range lexicon.Related(w) {
			if lexicon.Stem(r) == lexicon.Stem(w) {
				t.Errorf("Related(%q) holds %q, a form of the word itself", w, r)
			}
		}
	}
	if got := lexicon.Related("zzzq"); got != nil {
		t.Errorf("Related of no word = %q, want nil", got)
	}
}

// TestPhraseSynonyms checks that a phrase of two words finds the one
// word WordNet gives for it, its second word perhaps inflected.
func TestPhraseSynonyms(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"price", "reduction", "discount"},
		{"price", "reductions", "discount"},
		{"set", "up", "found"},
	} {
		if got := lexicon.PhraseSynonyms(c.a, c.b); !slices.Contains(got, c.want) {
			t.Errorf("PhraseSynonyms(%q, %q) = %q, want %q among them", c.a, c.b, got, c.want)
		}
	}
	if got := lexicon.PhraseSynonyms("reduction", "price"); got != nil {
		t.Errorf("PhraseSynonyms of the words the other way round = %q, want nil", got)
	}
}

// TestGuardsRelatedAndPhrase checks that related words and a phrase's
// synonyms pass the guards synonyms pass: no name is expanded or stands
// for a word, and only what the searched text holds counts.
func TestGuardsRelatedAndPhrase(t *testing.T) {
	g := lexicon.NewGuards([]string{"people"}, nil)
	holdsAll := func([]string) bool { return true }
	holdsNone := func([]string) bool { return false }
	has := func(syn [][]string, stems ...string) bool {
		return slices.ContainsFunc(syn, func(p []string) bool { return slices.Equal(p, stems) })
	}
	if got := lexicon.NewGuards(nil, nil).Related("folks", []string{"folks"}, holdsAll); !has(got, "peopl") {
		t.Errorf("Related(folks) = %q, want %q", got, "peopl")
	}
	if got := g.Related("folks", []string{"folks"}, holdsAll); has(got, "peopl") {
		t.Errorf("Related(folks) = %q with People a name, want no %q", got, "peopl")
	}
	if got := g.Related("reduction", []string{"reduction"}, holdsNone); got != nil {
		t.Errorf("Related(reduction) = %q where the text holds none, want nil", got)
	}
	if got := g.Phrase("price", "reduction", []string{"price", "reduction"}, holdsAll); !has(got, "discount") {
		t.Errorf("Phrase(price, reduction) = %q, want %q", got, "discount")
	}
	if got := lexicon.NewGuards([]string{"price"}, nil).Phrase("price", "reduction", []string{"price", "reduction"}, holdsAll); got != nil {
		t.Errorf("Phrase(price, reduction) = %q with Price a name, want nil", got)
	}
	// A word sharing a stem with a word of the phrase says only part of
	// it: a text's "account manager" is no managing director.
	if got := g.Phrase("managing", "director", []string{"managing", "director", "acme"}, holdsAll); has(got, "manag") {
		t.Errorf("Phrase(managing, director) = %q, want no %q", got, "manag")
	}
	// A synonym the question asks in a word of its own counts for that
	// word: "price reduction or discount?" finds "discount" as asked.
	if got := g.Phrase("price", "reduction", []string{"price", "reduction", "discount"}, holdsAll); has(got, "discount") {
		t.Errorf("Phrase(price, reduction) = %q beside the asked %q, want no %q", got, "discount", "discount")
	}
}
