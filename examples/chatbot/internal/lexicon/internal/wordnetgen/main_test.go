package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildKeysByPartOfSpeech checks that synsets of different parts of
// speech at the same offset stay apart: offsets are into each part of
// speech's own data file, and adjectives ("a") and adverbs ("r") once
// shared a key.
func TestBuildKeysByPartOfSpeech(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"index.noun": "  licence line\nmeantime n 1 0 1 1 00000100\n",
		"index.verb": "",
		"index.adj":  "preferential a 1 0 1 1 00000100\npreferred a 1 0 1 1 00000100\n",
		"index.adv":  "meanwhile r 1 0 1 1 00000100\nmeantime r 1 0 1 1 00000100\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := build(dir, 2, 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := "meantime meanwhile\npreferential preferred\n"
	if got != want {
		t.Errorf("build = %q, want %q", got, want)
	}
	if strings.Contains(got, "meanwhile preferential") {
		t.Errorf("build merged an adjective and an adverb synset: %q", got)
	}
}
