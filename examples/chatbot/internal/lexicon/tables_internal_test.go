package lexicon

import (
	"strings"
	"testing"
)

// TestTablesHoldWhatIsLookedUp checks that every line of the related-words
// table is keyed by one word, as Related looks it up (a phrase's line
// would never be found), and that no synonym of a phrase shares a stem
// with one of its words: "manager" says only part of "managing
// director".
func TestTablesHoldWhatIsLookedUp(t *testing.T) {
	for w := range relatedWords() {
		if strings.ContainsAny(w, " _") {
			t.Errorf("related.txt has a line for the phrase %q, which no question word looks up", w)
		}
	}
	for p, syn := range phrases() {
		a, b, _ := strings.Cut(p, " ")
		for _, x := range syn {
			if s := Stem(x); s == Stem(a) || s == Stem(b) {
				t.Errorf("phrases.txt gives %q for %q, sharing a stem with a word of the phrase", x, p)
			}
		}
	}
}
