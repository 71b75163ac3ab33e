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
	dir := database(t, map[string]string{
		"index.noun": "  licence line\nmeantime n 1 0 1 1 00000100\n",
		"index.verb": "",
		"index.adj":  "preferential a 1 0 1 1 00000100\npreferred a 1 0 1 1 00000100\n",
		"index.adv":  "meanwhile r 1 0 1 1 00000100\nmeantime r 1 0 1 1 00000100\n",
	})
	got, err := build(dir, 2, 0, 3, 6)
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

// TestBuildLaterSenses checks that a common word joins the group of a
// sense past -senses that the tagged corpus saw ("free" of "costless",
// its third), only where the group's other words make it without the
// word, and without a later sense taking the place of one of its main
// groups under -groups.
func TestBuildLaterSenses(t *testing.T) {
	dir := database(t, map[string]string{
		"index.noun": "",
		"index.verb": "",
		// free: senses 10, 20, 30 (costless), 40 (alone), 50 (unseen);
		// the corpus saw its first four.
		"index.adj": "free a 5 0 5 4 00000010 00000020 00000030 00000040 00000050\n" +
			"liberated a 1 0 1 1 00000010\n" +
			"unbound a 1 0 1 1 00000020\n" +
			"complimentary a 2 0 2 1 00000060 00000030\n" +
			"gratis a 1 0 1 1 00000030\n" +
			"unasked a 1 0 1 1 00000050\n",
		"index.adv": "",
	})
	got, err := build(dir, 2, 6, 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := "complimentary free+ gratis\nfree liberated\nfree unbound\n"
	if got != want {
		t.Errorf("build = %q, want %q", got, want)
	}
	if got, err = build(dir, 2, 0, 3, 6); err != nil || got != "complimentary gratis\nfree liberated\nfree unbound\n" {
		t.Errorf("build with -tagged 0 = %q, %v, want the first senses' groups alone", got, err)
	}
}

// TestBuildRelatedAndPhrases checks the related-words table (a noun's
// hypernyms and hyponyms, a word's derived forms, common words only) and
// the phrase table (a phrase's one-word synonyms) on a small database.
func TestBuildRelatedAndPhrases(t *testing.T) {
	dir := database(t, map[string]string{
		"index.noun": "  licence line\n" +
			"folks n 1 1 @ 1 1 00000010\n" +
			"people n 1 1 ~ 1 1 00000020\n" +
			"rabble n 1 1 @ 1 0 00000060\n" +
			"discount n 1 0 1 1 00000030\n" +
			"price_reduction n 1 0 1 0 00000030\n" +
			"founder n 1 1 + 1 1 00000040\n",
		"index.verb": "found v 1 1 + 1 1 00000050\n",
		"index.adj":  "",
		"index.adv":  "",
		"data.noun": "  licence line\n" +
			"00000010 03 n 01 folks 0 001 @ 00000020 n 0000 | people in general\n" +
			"00000020 03 n 01 people 0 002 ~ 00000010 n 0000 ~ 00000060 n 0000 | any group of human beings\n" +
			"00000030 04 n 02 discount 0 price_reduction 0 000 | the act of reducing the selling price\n" +
			"00000040 18 n 01 founder 0 001 + 00000050 v 0101 | a person who founds\n" +
			"00000060 14 n 01 rabble 0 001 @ 00000020 n 0000 | a disorderly crowd\n",
		"data.verb": "00000050 41 v 01 found 0 001 + 00000040 n 0101 01 + 02 00 | set up or establish\n",
		"data.adj":  "",
		"data.adv":  "",
	})
	got, err := buildRelated(dir, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	// "rabble" was never tagged: it is related to nothing, and nothing
	// to it.
	want := "folks people\nfound founder\nfounder found\npeople folks\n"
	if got != want {
		t.Errorf("buildRelated = %q, want %q", got, want)
	}
	got, err = buildPhrases(dir, 8)
	if err != nil {
		t.Fatal(err)
	}
	if want := "price_reduction discount\n"; got != want {
		t.Errorf("buildPhrases = %q, want %q", got, want)
	}
}

// TestBuildLeavesOutWhatNoQuestionFinds checks that the related-words
// table has no line for a phrase, which is looked up by one question
// word only, and that the phrase table leaves out a word sharing a stem
// with one of the phrase's words: "manager" says only part of "managing
// director", and a document's "account manager" is none.
func TestBuildLeavesOutWhatNoQuestionFinds(t *testing.T) {
	dir := database(t, map[string]string{
		"index.noun": "  licence line\n" +
			"director n 1 1 @ 1 1 00000010\n" +
			"manager n 1 1 @ 1 1 00000010\n" +
			"managing_director n 1 1 @ 1 1 00000010\n" +
			"executive n 1 1 ~ 1 1 00000020\n" +
			"head n 1 0 1 1 00000030\n" +
			"department_head n 1 0 1 1 00000030\n",
		"index.verb": "",
		"index.adj":  "",
		"index.adv":  "",
		"data.noun": "  licence line\n" +
			"00000010 18 n 03 director 0 manager 0 managing_director 0 001 @ 00000020 n 0000 | someone who controls resources\n" +
			"00000020 18 n 01 executive 0 001 ~ 00000010 n 0000 | a person responsible for an organization\n" +
			"00000030 18 n 02 head 0 department_head 0 000 | the person in charge of a department\n",
		"data.verb": "",
		"data.adj":  "",
		"data.adv":  "",
	})
	got, err := buildRelated(dir, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := "director executive\nexecutive director manager\nmanager executive\n"
	if got != want {
		t.Errorf("buildRelated = %q, want %q", got, want)
	}
	got, err = buildPhrases(dir, 8)
	if err != nil {
		t.Fatal(err)
	}
	// "managing_director director manager" before: "director" is a
	// word of the phrase, "manager" shares the stem of "managing";
	// "department_head head" the same.
	if got != "" {
		t.Errorf("buildPhrases = %q, want no line", got)
	}
}

// TestBuildRelatedKeepsClosestFirst checks that the cap on a word's
// related words keeps its derived forms, of any part of speech, before
// the more specific nouns of its noun senses: the verb "try" relates to
// "trial" though its noun has more hyponyms than the cap.
func TestBuildRelatedKeepsClosestFirst(t *testing.T) {
	dir := database(t, map[string]string{
		"index.noun": "try n 1 1 ~ 1 1 00000010\n" +
			"bid n 1 1 @ 1 1 00000020\n" +
			"stab n 1 1 @ 1 1 00000030\n" +
			"trial n 1 1 + 1 1 00000050\n",
		"index.verb": "try v 1 1 + 1 1 00000040\n",
		"index.adj":  "",
		"index.adv":  "",
		"data.noun": "00000010 04 n 01 try 0 002 ~ 00000020 n 0000 ~ 00000030 n 0000 | an attempt\n" +
			"00000020 04 n 01 bid 0 001 @ 00000010 n 0000 | an attempt to get something\n" +
			"00000030 04 n 01 stab 0 001 @ 00000010 n 0000 | a quick try\n" +
			"00000050 04 n 01 trial 0 001 + 00000040 v 0101 | trying something out\n",
		"data.verb": "00000040 41 v 01 try 0 001 + 00000050 n 0101 01 + 02 00 | put to the test\n",
		"data.adj":  "",
		"data.adv":  "",
	})
	got, err := buildRelated(dir, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := "bid try\nstab try\ntrial try\ntry trial bid\n"; got != want {
		t.Errorf("buildRelated = %q, want %q", got, want)
	}
}

// database writes files, the files of a WordNet database by name, into a
// new directory and returns it.
func database(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
