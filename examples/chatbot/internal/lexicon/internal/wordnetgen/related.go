package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kljensen/snowball/english"
)

// synset is one synset of a data file: its words, in order, and its
// pointers to other synsets.
type synset struct {
	words    []string
	pointers []pointer
}

// pointer is one relation of a synset's data line: its symbol ("@" a
// hypernym, "~" a hyponym, "+" a derivationally related form), the
// target synset's key, and for a lexical pointer the 1-based numbers of
// the source and target words (0 for a relation of the whole synsets).
type pointer struct {
	symbol         string
	target         string
	source, toWord int
}

// readData reads a data file's synsets into synsets, keyed as the index
// keys them: the part of speech (n, v, a or r; a satellite adjective's
// "s" is "a") and the offset.
func readData(name string, synsets map[string]*synset) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("wordnetgen: %w (install Debian's wordnet-base or pass -dict)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == ' ' {
			continue
		}
		if i := strings.Index(line, " | "); i >= 0 {
			line = line[:i] // the gloss
		}
		fs := strings.Fields(line)
		if len(fs) < 4 {
			return fmt.Errorf("wordnetgen: %s: short line %q", name, line)
		}
		n, err := strconv.ParseInt(fs[3], 16, 32)
		if err != nil || 4+2*int(n)+1 > len(fs) {
			return fmt.Errorf("wordnetgen: %s: bad word count in %q", name, line)
		}
		s := &synset{}
		for i := range int(n) {
			w := strings.ToLower(fs[4+2*i])
			if j := strings.IndexByte(w, '('); j >= 0 {
				w = w[:j] // an adjective's marker: "(a)", "(p)"
			}
			s.words = append(s.words, w)
		}
		at := 4 + 2*int(n)
		np, err := strconv.Atoi(fs[at])
		if err != nil || at+1+4*np > len(fs) {
			return fmt.Errorf("wordnetgen: %s: bad pointer count in %q", name, line)
		}
		for i := range np {
			p := fs[at+1+4*i : at+5+4*i]
			st := p[3]
			src, _ := strconv.ParseInt(st[:2], 16, 32)
			dst, _ := strconv.ParseInt(st[2:], 16, 32)
			s.pointers = append(s.pointers, pointer{symbol: p[0], target: posKey(p[2]) + p[1], source: int(src), toWord: int(dst)})
		}
		synsets[posKey(fs[2])+fs[0]] = s
	}
	return sc.Err()
}

func posKey(pos string) string {
	if pos == "s" {
		return "a"
	}
	return pos
}

// indexEntry is one index line: a word's synsets, most frequent sense
// first, and whether the word was seen in the tagged corpus.
type indexEntry struct {
	word    string
	synsets []string
	common  bool
	tagged  int // how many of its first senses the tagged corpus saw
}

// readIndexEntries reads an index file's words. A line is "lemma pos
// synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt
// synset_offset...", and lines starting with a space are the licence.
// A synset is keyed by the line's pos (n, v, a or r) and its offset,
// since offsets are into that part of speech's own data file.
func readIndexEntries(name string) ([]indexEntry, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("wordnetgen: %w (install Debian's wordnet-base or pass -dict)", err)
	}
	defer f.Close()
	var out []indexEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == ' ' {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) < 6 {
			return nil, fmt.Errorf("wordnetgen: %s: short line %q", name, line)
		}
		if pos := fs[1]; len(pos) != 1 || !strings.Contains("nvar", pos) {
			return nil, fmt.Errorf("wordnetgen: %s: bad part of speech %q in %q (want n, v, a or r)", name, pos, line)
		}
		nptr, err := strconv.Atoi(fs[3])
		if err != nil || 4+nptr+2 > len(fs) {
			return nil, fmt.Errorf("wordnetgen: %s: bad pointer count in %q", name, line)
		}
		tagged, err := strconv.Atoi(fs[4+nptr+1])
		if err != nil {
			return nil, fmt.Errorf("wordnetgen: %s: bad tagged sense count in %q", name, line)
		}
		e := indexEntry{word: fs[0], common: tagged > 0, tagged: tagged}
		for _, off := range fs[4+nptr+2:] {
			e.synsets = append(e.synsets, fs[1]+off)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// loadDict reads the data and index files of dict: the synsets by key,
// the words seen in the tagged corpus, and every index line.
func loadDict(dict string) (map[string]*synset, map[string]bool, []indexEntry, error) {
	synsets := map[string]*synset{}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		if err := readData(filepath.Join(dict, "data."+pos), synsets); err != nil {
			return nil, nil, nil, err
		}
	}
	common := map[string]bool{}
	var entries []indexEntry
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		es, err := readIndexEntries(filepath.Join(dict, "index."+pos))
		if err != nil {
			return nil, nil, nil, err
		}
		for _, e := range es {
			if e.common {
				common[e.word] = true
			}
		}
		entries = append(entries, es...)
	}
	return synsets, common, entries, nil
}

// buildRelated returns the related-words table's text: one line a word,
// the word and then the words related to it, a phrase's words joined by
// "_". A word's related words are, over its first senses (-senses): for
// a noun, the words of the synsets one level above it (its hypernyms:
// "folks" is "people") and one level below (its hyponyms: "discount"
// has "rebate"), and, for every part of speech, the words WordNet
// derives from it or it from them ("found" has "founder" and
// "foundation", "employee" has "employ"). Only common words (seen in
// the tagged corpus) of one or two words are kept, at most size of
// them, most frequent senses first; a word related to nothing has no
// line. Only single words have lines: the table is looked up by one
// question word, never by a phrase.
func buildRelated(dict string, senses, size int) (string, error) {
	synsets, common, entries, err := loadDict(dict)
	if err != nil {
		return "", err
	}
	// The closest relations first, so that the cap keeps them: the
	// word's derived forms in every part of speech ("trial" of the verb
	// "try"), then the more general nouns, then the more specific ones,
	// of which a word may have dozens.
	type candidate struct {
		word     string
		priority int // 0 a derived form, 1 a more general noun, 2 a more specific one
	}
	priorities := map[string]int{"+": 0, "@": 1, "~": 2}
	cands := map[string][]candidate{}
	var order []string
	for _, e := range entries {
		if !e.common || !plain(e.word) || strings.Contains(e.word, "_") {
			continue // a phrase is never looked up
		}
		add := func(w string, priority int) {
			w = strings.ToLower(w)
			if w == e.word || !common[w] || !plain(w) {
				return
			}
			if cands[e.word] == nil {
				order = append(order, e.word)
			}
			cands[e.word] = append(cands[e.word], candidate{w, priority})
		}
		for rank, key := range e.synsets {
			if rank >= senses {
				break
			}
			s := synsets[key]
			if s == nil {
				return "", fmt.Errorf("wordnetgen: %s's synset %s is in no data file", e.word, key)
			}
			self := slices.Index(s.words, e.word) + 1
			for _, p := range s.pointers {
				t := synsets[p.target]
				if t == nil {
					continue
				}
				switch {
				case p.symbol == "+" && (p.source == self || p.source == 0) && p.toWord > 0 && p.toWord <= len(t.words):
					add(t.words[p.toWord-1], priorities[p.symbol])
				case key[0] == 'n' && (p.symbol == "@" || p.symbol == "~") && p.source == 0:
					for _, w := range t.words[:min(2, len(t.words))] {
						add(w, priorities[p.symbol])
					}
				}
			}
		}
	}
	related := map[string][]string{}
	for _, w := range order {
		cs := cands[w]
		slices.SortStableFunc(cs, func(a, b candidate) int { return a.priority - b.priority })
		for _, c := range cs {
			if len(related[w]) < size && !slices.Contains(related[w], c.word) {
				related[w] = append(related[w], c.word)
			}
		}
	}
	slices.Sort(order)
	var b strings.Builder
	for _, w := range order {
		b.WriteString(w)
		for _, r := range related[w] {
			b.WriteString(" " + r)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// buildPhrases returns the phrase table's text: one line a phrase of two
// words that WordNet holds (its words joined by "_"), then the one-word
// common words of its most frequent sense ("price_reduction discount
// deduction"): what a question may ask in two words that a document
// says in one. A phrase none of whose sense's words is such a word has
// no line; nor has a word that shares a stem with one of the phrase's
// words ("credit_card card", "managing_director manager"): it says only
// part of the phrase, and a document's "account manager" is no managing
// director.
func buildPhrases(dict string, size int) (string, error) {
	synsets, common, entries, err := loadDict(dict)
	if err != nil {
		return "", err
	}
	out := map[string][]string{}
	for _, e := range entries {
		if strings.Count(e.word, "_") != 1 || !plain(e.word) || len(e.synsets) == 0 {
			continue
		}
		s := synsets[e.synsets[0]]
		if s == nil {
			return "", fmt.Errorf("wordnetgen: %s's synset %s is in no data file", e.word, e.synsets[0])
		}
		parts := strings.Split(e.word, "_")
		for i, p := range parts {
			parts[i] = english.Stem(p, true)
		}
		for _, w := range s.words {
			if strings.Contains(w, "_") || !common[w] || !plain(w) || slices.Contains(parts, english.Stem(w, true)) || len(out[e.word]) >= size || slices.Contains(out[e.word], w) {
				continue
			}
			out[e.word] = append(out[e.word], w)
		}
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + " " + strings.Join(out[k], " ") + "\n")
	}
	return b.String(), nil
}
