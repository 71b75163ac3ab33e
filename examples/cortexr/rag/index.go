package rag

import (
	"cmp"
	"slices"
	"sync"
)

// Hit is one chunk found by a search.
type Hit struct {
	// Text is the chunk.
	Text string `json:"text"`
	// Source is the document the chunk is from: a path relative to the
	// folder, or a URL.
	Source string `json:"source"`
	// ChunkID is "<source>#<chunk index>".
	ChunkID string `json:"chunk_id"`
	// Score is the cosine similarity of the chunk and the query, in [-1, 1].
	Score float64 `json:"score"`
}

// VectorIndex stores chunk vectors by source document and finds the nearest
// to a query. Implementations are safe for concurrent use.
type VectorIndex interface {
	// Put replaces every vector of source with vecs, one per chunk.
	Put(source string, vecs [][]float32, chunks []Hit)
	// Delete removes source's vectors.
	Delete(source string)
	// Search returns the k chunks most similar to q, best first.
	Search(q []float32, k int) []Hit
	// Len is the number of vectors stored.
	Len() int
}

// ExactIndex is a VectorIndex that compares the query with every stored
// vector (cosine similarity over normalised vectors). Its cost is linear in
// the number of chunks; see BenchmarkExactIndexSearch for when an
// approximate index pays.
type ExactIndex struct {
	mu      sync.RWMutex
	sources map[string][]entry
	n       int
}

type entry struct {
	vec []float32
	hit Hit
}

// NewExactIndex returns an empty exact index.
func NewExactIndex() *ExactIndex { return &ExactIndex{sources: map[string][]entry{}} }

// Put implements VectorIndex.
func (x *ExactIndex) Put(source string, vecs [][]float32, chunks []Hit) {
	es := make([]entry, len(vecs))
	for i := range vecs {
		es[i] = entry{vec: normalize(vecs[i]), hit: chunks[i]}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.n += len(es) - len(x.sources[source])
	x.sources[source] = es
}

// Delete implements VectorIndex.
func (x *ExactIndex) Delete(source string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.n -= len(x.sources[source])
	delete(x.sources, source)
}

// Len implements VectorIndex.
func (x *ExactIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}

// Search implements VectorIndex.
func (x *ExactIndex) Search(q []float32, k int) []Hit {
	if k <= 0 {
		return nil
	}
	q = normalize(q)
	x.mu.RLock()
	defer x.mu.RUnlock()
	top := make([]Hit, 0, k+1)
	for _, es := range x.sources {
		for _, e := range es {
			if len(e.vec) != len(q) {
				continue
			}
			var s float32
			for i, v := range e.vec {
				s += v * q[i]
			}
			h := e.hit
			h.Score = float64(s)
			if len(top) == k && better(top[k-1], h) <= 0 {
				continue
			}
			i, _ := slices.BinarySearchFunc(top, h, better)
			top = slices.Insert(top, i, h)
			if len(top) > k {
				top = top[:k]
			}
		}
	}
	return top
}

// better orders hits best first: higher score, then lower chunk id, so
// results are deterministic.
func better(a, b Hit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.ChunkID, b.ChunkID)
}
