package cognition

import (
	"math"
	"strings"
	"unicode"
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

// tokens splits s into normalised words: lower case, letters and digits
// only, stop words and one-letter words removed, a trailing plural "s" cut
// from words longer than three letters.
func tokens(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(f)) < 2 || stopWords[f] {
			continue
		}
		if len(f) > 3 && strings.HasSuffix(f, "s") && !strings.HasSuffix(f, "ss") {
			f = f[:len(f)-1]
		}
		out = append(out, f)
	}
	return out
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

// bm25 scores documents against a query with Okapi BM25 (k1 1.2, b 0.75)
// over the tokens of this file. It is built per ranking from the candidate
// documents, which for one user's episodes is at most a few hundred short
// texts.
type bm25 struct {
	docs  []map[string]int
	lens  []int
	avg   float64
	df    map[string]int
	total int
}

func newBM25(texts []string) *bm25 {
	x := &bm25{docs: make([]map[string]int, len(texts)), lens: make([]int, len(texts)), df: make(map[string]int)}
	sum := 0
	for i, t := range texts {
		tf := make(map[string]int)
		toks := tokens(t)
		for _, w := range toks {
			tf[w]++
		}
		for w := range tf {
			x.df[w]++
		}
		x.docs[i], x.lens[i] = tf, len(toks)
		sum += len(toks)
	}
	x.total = len(texts)
	if len(texts) > 0 {
		x.avg = float64(sum) / float64(len(texts))
	}
	return x
}

// score returns the BM25 score of document i for the query terms.
func (x *bm25) score(i int, query []string) float64 {
	const k1, b = 1.2, 0.75
	var s float64
	for _, q := range query {
		tf := float64(x.docs[i][q])
		if tf == 0 {
			continue
		}
		n := float64(x.df[q])
		idf := math.Log(1 + (float64(x.total)-n+0.5)/(n+0.5))
		norm := 1 - b
		if x.avg > 0 {
			norm += b * float64(x.lens[i]) / x.avg
		}
		s += idf * tf * (k1 + 1) / (tf + k1*norm)
	}
	return s
}
