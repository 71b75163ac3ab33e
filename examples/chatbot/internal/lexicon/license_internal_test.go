package lexicon

import (
	"strings"
	"testing"
)

// TestLicenseNotice checks that the embedded table carries WordNet's
// licence notice, as the licence asks of every copy of derived data, and
// that the parser takes none of the notice's words for synonyms.
func TestLicenseNotice(t *testing.T) {
	if !strings.HasPrefix(wordnet, "# ") || !strings.Contains(wordnet, "# WordNet 3.0 Copyright 2006 by Princeton University.") {
		t.Fatalf("wordnet.txt does not start with WordNet's notice in '#' lines")
	}
	for _, w := range []string{"#", "princeton", "copyright"} {
		if _, ok := synonyms()[Stem(w)]; ok {
			t.Errorf("%q of the notice is a key of the synonym table", w)
		}
	}
}
