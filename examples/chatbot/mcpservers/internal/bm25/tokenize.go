package bm25

import (
	"strings"
	"unicode"
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

// Stem reduces a lower-case English word with steps 1a, 1b and 1c of Porter's
// stemming algorithm: plurals ("policies" → "polici"), past tenses and
// gerunds ("priced", "pricing" → "price") and a final y after a vowel-bearing
// stem ("policy" → "polici"). Words of one or two letters and words with
// non-ASCII letters are returned unchanged.
func Stem(w string) string {
	if len(w) <= 2 || !isASCIILower(w) {
		return w
	}
	b := []byte(w)
	b = step1a(b)
	b = step1b(b)
	b = step1c(b)
	return string(b)
}

func isASCIILower(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// isConsonant reports whether b[i] is a consonant in Porter's sense: not
// a, e, i, o, u, and not a y that follows a consonant.
func isConsonant(b []byte, i int) bool {
	switch b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !isConsonant(b, i-1)
	}
	return true
}

// measure is Porter's m: the number of vowel-consonant sequences in b.
func measure(b []byte) int {
	m, i, n := 0, 0, len(b)
	for i < n && isConsonant(b, i) {
		i++
	}
	for i < n {
		for i < n && !isConsonant(b, i) {
			i++
		}
		if i == n {
			break
		}
		for i < n && isConsonant(b, i) {
			i++
		}
		m++
	}
	return m
}

func hasVowel(b []byte) bool {
	for i := range b {
		if !isConsonant(b, i) {
			return true
		}
	}
	return false
}

func endsDoubleConsonant(b []byte) bool {
	n := len(b)
	return n >= 2 && b[n-1] == b[n-2] && isConsonant(b, n-1)
}

// endsCVC reports whether b ends consonant-vowel-consonant where the last
// consonant is not w, x or y ("hop", not "snow").
func endsCVC(b []byte) bool {
	n := len(b)
	if n < 3 || !isConsonant(b, n-3) || isConsonant(b, n-2) || !isConsonant(b, n-1) {
		return false
	}
	c := b[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

func hasSuffix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[len(b)-len(s):]) == s
}

func step1a(b []byte) []byte {
	switch {
	case hasSuffix(b, "sses"):
		return b[:len(b)-2]
	case hasSuffix(b, "ies"):
		return b[:len(b)-2]
	case hasSuffix(b, "ss"):
		return b
	case hasSuffix(b, "s"):
		return b[:len(b)-1]
	}
	return b
}

func step1b(b []byte) []byte {
	if hasSuffix(b, "eed") {
		if measure(b[:len(b)-3]) > 0 {
			return b[:len(b)-1]
		}
		return b
	}
	var stem []byte
	switch {
	case hasSuffix(b, "ed") && hasVowel(b[:len(b)-2]):
		stem = b[:len(b)-2]
	case hasSuffix(b, "ing") && hasVowel(b[:len(b)-3]):
		stem = b[:len(b)-3]
	default:
		return b
	}
	switch {
	case hasSuffix(stem, "at"), hasSuffix(stem, "bl"), hasSuffix(stem, "iz"):
		return append(stem, 'e')
	case endsDoubleConsonant(stem):
		if c := stem[len(stem)-1]; c != 'l' && c != 's' && c != 'z' {
			return stem[:len(stem)-1]
		}
		return stem
	case measure(stem) == 1 && endsCVC(stem):
		return append(stem, 'e')
	}
	return stem
}

func step1c(b []byte) []byte {
	if hasSuffix(b, "y") && hasVowel(b[:len(b)-1]) {
		b[len(b)-1] = 'i'
	}
	return b
}
