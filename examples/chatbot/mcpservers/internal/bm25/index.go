package bm25

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Default parameters, the values most engines ship with.
const (
	DefaultK1 = 1.2
	DefaultB  = 0.75
)

// Errors returned by [New].
var (
	// ErrDuplicateID reports two documents with the same ID.
	ErrDuplicateID = errors.New("bm25: duplicate document id")
	// ErrParams reports k1 or b out of range.
	ErrParams = errors.New("bm25: invalid parameters")
)

// Document is one unit of text to rank, such as a page or a passage.
type Document struct {
	// ID names the document in results. IDs must be unique within an index.
	ID string
	// Text is what is tokenized and matched.
	Text string
}

// Params tune the ranking. The zero value selects the defaults.
type Params struct {
	// K1 is the term-frequency saturation, >= 0. Zero means DefaultK1; to
	// ignore term frequency entirely, use a tiny positive value.
	K1 float64
	// B is the length normalisation, in [0, 1]. Zero means DefaultB unless
	// NoLengthNorm is set.
	B float64
	// NoLengthNorm sets b to 0: document length does not affect scores.
	NoLengthNorm bool
}

// Hit is one ranked document.
type Hit struct {
	// ID is the document's ID.
	ID string
	// Index is the document's position in the slice given to New.
	Index int
	// Score is the BM25 score, > 0.
	Score float64
}

type posting struct {
	doc int32
	tf  int32
}

// Index is an immutable BM25 index. It is safe for concurrent use.
type Index struct {
	k1, b    float64
	ids      []string
	lengths  []int32
	avgdl    float64
	postings map[string][]posting
}

// New tokenizes docs with [Tokenize] and builds an index over them.
func New(docs []Document, p Params) (*Index, error) {
	k1, b := p.K1, p.B
	if k1 == 0 {
		k1 = DefaultK1
	}
	if p.NoLengthNorm {
		b = 0
	} else if b == 0 {
		b = DefaultB
	}
	if k1 < 0 || math.IsNaN(k1) || math.IsInf(k1, 0) {
		return nil, fmt.Errorf("%w: K1 is %v; use a finite value >= 0 (0 selects %v)", ErrParams, p.K1, DefaultK1)
	}
	if b < 0 || b > 1 || math.IsNaN(b) {
		return nil, fmt.Errorf("%w: B is %v; use a value in [0, 1] (0 selects %v)", ErrParams, p.B, DefaultB)
	}
	ix := &Index{
		k1:       k1,
		b:        b,
		ids:      make([]string, len(docs)),
		lengths:  make([]int32, len(docs)),
		postings: make(map[string][]posting),
	}
	seen := make(map[string]int, len(docs))
	total := 0
	for i, d := range docs {
		if j, dup := seen[d.ID]; dup {
			return nil, fmt.Errorf("%w: %q at positions %d and %d", ErrDuplicateID, d.ID, j, i)
		}
		seen[d.ID] = i
		ix.ids[i] = d.ID
		terms := Tokenize(d.Text)
		ix.lengths[i] = int32(len(terms))
		total += len(terms)
		tf := make(map[string]int32, len(terms))
		for _, t := range terms {
			tf[t]++
		}
		for t, n := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), tf: n})
		}
	}
	if len(docs) > 0 {
		ix.avgdl = float64(total) / float64(len(docs))
	}
	return ix, nil
}

// Len reports the number of documents in the index.
func (ix *Index) Len() int { return len(ix.ids) }

// AvgLen reports the mean number of terms per document.
func (ix *Index) AvgLen() float64 { return ix.avgdl }

// IDF returns the inverse document frequency of an already tokenized term.
func (ix *Index) IDF(term string) float64 {
	n := float64(len(ix.postings[term]))
	return math.Log(1 + (float64(len(ix.ids))-n+0.5)/(n+0.5))
}

// Search ranks the documents against query and returns at most k hits with
// a positive score, best first; ties keep the order of the documents given
// to New. A k <= 0 returns every matching document. Repeated query terms
// count once.
func (ix *Index) Search(query string, k int) []Hit {
	return ix.SearchTerms(Tokenize(query), nil, k)
}

// SearchTerms is Search for terms already tokenized, followed by extra
// terms that count less: each adds its BM25 score times its Weight, so a
// word the query was expanded to ranks a document below one with the
// query's own word. A term that is also a query term, or repeated,
// counts once, at its first weight. An extra term marked Beside counts
// only in a document that holds one of terms.
func (ix *Index) SearchTerms(terms []string, extra []Term, k int) []Hit {
	if len(terms)+len(extra) == 0 || len(ix.ids) == 0 {
		return nil
	}
	scores := make([]float64, len(ix.ids))
	matched := make([]int32, 0, 16)
	seen := make(map[string]struct{}, len(terms)+len(extra))
	// anchored marks the documents that hold one of terms: the first
	// len(matched) after terms are scored.
	var anchored []bool
	add := func(t string, weight float64, beside bool) {
		if _, dup := seen[t]; dup {
			return
		}
		seen[t] = struct{}{}
		plist := ix.postings[t]
		if len(plist) == 0 || weight <= 0 {
			return
		}
		idf := weight * ix.IDF(t)
		for _, p := range plist {
			if beside && !anchored[p.doc] {
				continue
			}
			if scores[p.doc] == 0 {
				matched = append(matched, p.doc)
			}
			scores[p.doc] += idf * ix.termWeight(float64(p.tf), float64(ix.lengths[p.doc]))
		}
	}
	for _, t := range terms {
		add(t, 1, false)
	}
	if slices.ContainsFunc(extra, func(t Term) bool { return t.Beside }) {
		anchored = make([]bool, len(ix.ids))
		for _, d := range matched {
			anchored[d] = true
		}
	}
	for _, t := range extra {
		add(t.Text, t.Weight, t.Beside)
	}
	hits := make([]Hit, 0, len(matched))
	for _, d := range matched {
		if s := scores[d]; s > 0 {
			hits = append(hits, Hit{ID: ix.ids[d], Index: int(d), Score: s})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	if k > 0 && len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// Term is a tokenized term of a search and how much it counts against
// the query's own terms, which count 1.
type Term struct {
	// Text is the term, as Tokenize gives it.
	Text string
	// Weight multiplies the term's BM25 score; 0 or less adds nothing.
	Weight float64
	// Beside makes the term count only in a document that holds one of
	// the search's own terms: a synonym ranks the documents that hold
	// the query's other words, it finds none alone.
	Beside bool
}

// termWeight is the saturated, length-normalised term frequency.
func (ix *Index) termWeight(tf, dl float64) float64 {
	norm := 1.0
	if ix.avgdl > 0 {
		norm = 1 - ix.b + ix.b*dl/ix.avgdl
	}
	return tf * (ix.k1 + 1) / (tf + ix.k1*norm)
}

// Contains reports whether any document holds the already tokenized term.
func (ix *Index) Contains(term string) bool { return len(ix.postings[term]) > 0 }
