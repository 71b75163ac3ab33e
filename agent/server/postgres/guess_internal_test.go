package postgres

import (
	"fmt"
	"strings"
	"testing"
)

// TestGuessesBounded checks that guesses holds at most maxGuesses
// threads, the one put last among them, and no thread whose metadata is
// over maxGuessMetadata (putting one forgets what was remembered of it).
func TestGuessesBounded(t *testing.T) {
	var g guesses
	for i := range maxGuesses + 100 {
		g.put(fmt.Sprint("t", i), threadGuess{owner: "alice", md: []byte(`{}`)})
		if n := g.len(); n > maxGuesses {
			t.Fatalf("%d threads remembered; want at most %d", n, maxGuesses)
		}
	}
	if n := g.len(); n != maxGuesses {
		t.Fatalf("%d threads remembered; want %d", n, maxGuesses)
	}
	last := fmt.Sprint("t", maxGuesses+99)
	if _, ok := g.get(last); !ok {
		t.Fatal("the thread put last is not remembered")
	}
	big := []byte(`{"k":"` + strings.Repeat("x", maxGuessMetadata) + `"}`)
	g.put(last, threadGuess{owner: "alice", md: big})
	if _, ok := g.get(last); ok {
		t.Fatal("a thread with metadata over the bound is remembered")
	}
	g.put("new", threadGuess{owner: "alice", md: big})
	if _, ok := g.get("new"); ok || g.len() != maxGuesses-1 {
		t.Fatalf("a new thread with metadata over the bound: remembered %v, %d threads", ok, g.len())
	}
}
