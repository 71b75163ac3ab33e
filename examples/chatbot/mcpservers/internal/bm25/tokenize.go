package bm25

import (
	"strings"
	"unicode"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// Tokenize splits text into the terms the index stores and matches: runs of
// letters and digits, lower-cased, without English stop words, each reduced by
// [Stem]. A term keeps inner apostrophes out ("don't" gives "don" and "t",
// and "t" is dropped as a one-letter word).
func Tokenize(text string) []string {
	fields := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	terms := fields[:0]
	for _, f := range fields {
		f = strings.ToLower(f)
		if len(f) < 2 && !isDigits(f) {
			continue
		}
		if _, stop := stopWords[f]; stop {
			continue
		}
		terms = append(terms, Stem(f))
	}
	return terms
}

// StopWord reports whether w, a lower-case word, is one of the English
// stop words that Tokenize drops ("the", "which", "your").
func StopWord(w string) bool {
	_, ok := stopWords[w]
	return ok
}

func isDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

// stopWords are frequent English words that carry no topic. The list is short
// on purpose: words like "not" or "per" matter in product documents.
var stopWords = func() map[string]struct{} {
	m := make(map[string]struct{})
	for _, w := range strings.Fields(`a an and are as at be been but by can could do does
		for from had has have he her his how i if in into is it its me my of on or our
		she so than that the their them then there these they this those to was we were
		what when where which who whom why will with would you your`) {
		m[w] = struct{}{}
	}
	return m
}()

// Stem reduces a lower-case English word to its Snowball English (Porter2)
// stem, the one the offline demo model matches words by (see package
// lexicon): plurals ("policies" → "polici"), past tenses and gerunds
// ("priced", "pricing" → "price") and derivations ("generously" →
// "generous"). Words of one or two letters and words with non-ASCII
// letters are returned unchanged.
func Stem(w string) string { return lexicon.Stem(w) }
