package cognition

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Similarity scores how alike two texts are, from 0 (unrelated) to 1
// (the same). It must be symmetric, deterministic and safe for concurrent
// use. [TokenJaccard] is the default; a function comparing embeddings fits
// here as well (cache the vectors: it is called once per stored episode
// for every new one).
type Similarity func(a, b string) float64

// TokenJaccard is the Jaccard similarity of the two texts' sets of
// normalised words: lower-cased, split at anything not a letter or digit,
// with common English stop words and one-letter words dropped. Two texts
// with no words are the same (1); one empty text is unrelated to a
// non-empty one (0).
func TokenJaccard(a, b string) float64 {
	sa, sb := tokenSet(a), tokenSet(b)
	if len(sa) == 0 && len(sb) == 0 {
		return 1
	}
	inter := 0
	for t := range sa {
		if _, ok := sb[t]; ok {
			inter++
		}
	}
	union := len(sa) + len(sb) - inter
	return float64(inter) / float64(union)
}

func tokenSet(s string) map[string]struct{} {
	toks := tokens(s)
	set := make(map[string]struct{}, len(toks))
	for _, t := range toks {
		set[t] = struct{}{}
	}
	return set
}

// tokens splits s into normalised words (see eachToken).
func tokens(s string) []string {
	var out []string
	eachToken(s, func(w string) { out = append(out, w) })
	return out
}

// eachToken calls fn with each normalised word of s, in order: lower case,
// letters and digits only, stop words and one-letter words removed, a
// trailing plural "s" cut from words longer than three letters. It
// allocates nothing beyond lower-casing s.
func eachToken(s string, fn func(string)) {
	s = strings.ToLower(s)
	emit := func(w string) {
		if utf8.RuneCountInString(w) < 2 || stopWords[w] {
			return
		}
		if len(w) > 3 && w[len(w)-1] == 's' && w[len(w)-2] != 's' {
			w = w[:len(w)-1]
		}
		fn(w)
	}
	start := -1
	for i, r := range s {
		var word bool
		if r < utf8.RuneSelf {
			word = 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || 'A' <= r && r <= 'Z'
		} else {
			word = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			emit(s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		emit(s[start:])
	}
}

var stopWords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does for from had has have
		he her him his how i if in into is it its me my no not of on or our she so than that the their them then
		there these they this to too us was we were what when where which who why will with would you your`) {
		m[w] = true
	}
	return m
}()

// bm25 returns the Okapi BM25 scores (k1 1.2, b 0.75) of texts for the
// query terms, over the words of eachToken. The statistics come from texts
// themselves, which for one user's episodes are at most a few hundred
// short texts; only the query terms are counted.
func bm25(texts []string, query []string) []float64 {
	const k1, b = 1.2, 0.75
	nq := len(query)
	tf := make([]int32, len(texts)*nq)
	lens := make([]int, len(texts))
	df := make([]int, nq)
	var index map[string]int
	if nq > 8 {
		index = make(map[string]int, nq)
		for j, q := range query {
			index[q] = j
		}
	}
	total := 0
	for i, t := range texts {
		row := tf[i*nq : (i+1)*nq]
		eachToken(t, func(w string) {
			lens[i]++
			if index != nil {
				if j, ok := index[w]; ok {
					row[j]++
				}
				return
			}
			for j, q := range query {
				if w == q {
					row[j]++
					break
				}
			}
		})
		for j := range row {
			if row[j] > 0 {
				df[j]++
			}
		}
		total += lens[i]
	}
	scores := make([]float64, len(texts))
	if len(texts) == 0 {
		return scores
	}
	avg := float64(total) / float64(len(texts))
	n := float64(len(texts))
	for i := range texts {
		norm := 1 - b
		if avg > 0 {
			norm += b * float64(lens[i]) / avg
		}
		for j := range nq {
			f := float64(tf[i*nq+j])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[j])+0.5)/(float64(df[j])+0.5))
			scores[i] += idf * f * (k1 + 1) / (f + k1*norm)
		}
	}
	return scores
}
