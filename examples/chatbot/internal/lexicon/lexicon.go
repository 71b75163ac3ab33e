package lexicon

import (
	_ "embed"
	"slices"
	"strings"
	"sync"

	"github.com/kljensen/snowball/english"
)

// Stem returns the Snowball English (Porter2) stem of a lower-case word:
// "pricing", "priced" and "prices" are "price", "started" is "start" and
// "starter" is "starter", and "acme's" is "acm" as "acme" is. A word of
// one or two letters, or with a byte that is not a lower-case ASCII
// letter, a digit or an apostrophe, is returned as it is.
func Stem(w string) string {
	if len(w) <= 2 || !isLowerASCII(w) {
		return w
	}
	stems.Lock()
	s, ok := stems.m[w]
	stems.Unlock()
	if ok {
		return s
	}
	s = english.Stem(w, true)
	stems.Lock()
	if len(stems.m) >= maxStems {
		clear(stems.m) // the words of recent questions and passages come back
	}
	stems.m[strings.Clone(w)] = s
	stems.Unlock()
	return s
}

// maxStems bounds the stems remembered.
const maxStems = 8192

// stems remembers the stems of the words last stemmed: the algorithm
// takes microseconds and allocates, and a chat stems the same few
// hundred words of its question and passages again and again.
var stems = struct {
	sync.Mutex
	m map[string]string
}{m: make(map[string]string)}

func isLowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '\'' {
			return false
		}
	}
	return true
}

// wordnet is the synonym table: one group of synonyms a line, a phrase's
// words joined by "_".
//
//go:embed wordnet.txt
var wordnet string

// maxSynonyms bounds the synonyms of one stem, over all its groups.
const maxSynonyms = 12

// synonyms maps a stem to the words that share a WordNet synset with a
// word of that stem, a phrase's words separated by a space. It is built
// on first use.
var synonyms = sync.OnceValue(func() map[string][]string {
	m := make(map[string][]string, 16384)
	var group, stems []string
	for line := range strings.Lines(wordnet) {
		group, stems = group[:0], stems[:0]
		for _, w := range strings.Fields(line) {
			w = strings.ReplaceAll(w, "_", " ")
			group, stems = append(group, w), append(stems, Stem(w))
		}
		for i, w := range group {
			if strings.Contains(w, " ") {
				continue // a phrase is a synonym, not a key
			}
			s := stems[i]
			for j, x := range group {
				// Another form of the same word is no synonym.
				if stems[j] != s && len(m[s]) < maxSynonyms && !slices.Contains(m[s], x) {
					m[s] = append(m[s], x)
				}
			}
		}
	}
	return m
})

// Synonyms returns the words WordNet gives as synonyms of w, a
// lower-case word, in any of its inflections: "clients" finds
// "customer", "permitted" finds "allow" and "let". A phrase has its words
// separated by a space ("set up"). The words are those of the most
// frequent senses of common words, at most twelve; other forms of w
// itself are not among them. The caller must not modify the slice.
func Synonyms(w string) []string {
	return synonyms()[Stem(w)]
}
