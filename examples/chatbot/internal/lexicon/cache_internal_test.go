package lexicon

import (
	"strings"
	"testing"
)

// A word longer than maxCachedWord is stemmed but not remembered, so the
// cache's size is bounded by its entries times maxCachedWord.
func TestLongWordsNotCached(t *testing.T) {
	long := strings.Repeat("abcdefgh", 5) + "ing"
	if got := Stem(long); got != strings.Repeat("abcdefgh", 5) {
		t.Fatalf("Stem(%q) = %q", long, got)
	}
	stems.RLock()
	_, cached := stems.m[long]
	stems.RUnlock()
	if cached {
		t.Errorf("a %d-byte word was remembered; words over %d bytes must not be", len(long), maxCachedWord)
	}
	Stem("pricing")
	stems.RLock()
	_, cached = stems.m["pricing"]
	stems.RUnlock()
	if !cached {
		t.Error("a short word was not remembered")
	}
}
