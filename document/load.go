package document

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Describe returns the line a model's prompt shows for doc, to decide
// whether to load it: name (quoted, so that no name can add a line),
// id, status, size and summary, e.g.
//
//   - "pricing.md" (id 7f3a…, ready, 3 chunks, ~2400 tokens): Competitor prices for Q3…
func Describe(doc Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- %q (id %s, %s", doc.Name, doc.ID, doc.Status)
	if doc.Status == StatusReady {
		fmt.Fprintf(&b, ", %d chunks", doc.Chunks)
	}
	fmt.Fprintf(&b, ", ~%d tokens)", doc.Tokens)
	switch doc.Status {
	case StatusReady:
		b.WriteString(": ")
		b.WriteString(doc.Summary)
	case StatusFailed:
		b.WriteString(": processing failed: ")
		b.WriteString(doc.Error)
	default:
		b.WriteString(": summary not ready yet")
	}
	return b.String()
}

// Overview returns the conversation's documents, one [Describe] line each,
// oldest first; empty when it has none.
func Overview(ctx context.Context, s Store, conversationID string) (string, error) {
	docs, err := s.List(ctx, conversationID)
	if err != nil {
		return "", err
	}
	lines := make([]string, len(docs))
	for i, d := range docs {
		lines[i] = Describe(d)
	}
	return strings.Join(lines, "\n"), nil
}

// LoadOptions selects what [Load] returns of a document.
type LoadOptions struct {
	// Chunks are the indexes of the chunks to consider. Nil means all.
	Chunks []int
	// Query, when set, ranks the chunks by how many of its words they
	// contain (rarer words count more), so that a budget keeps the most
	// relevant ones. Empty keeps chunks in document order.
	Query string
	// Budget is the most estimated tokens of chunk text to return. Zero
	// or negative means no limit.
	Budget int
}

// Loaded is the part of a document that [Load] returns.
type Loaded struct {
	// Document is the document's metadata.
	Document Document
	// Chunks are the selected chunks, in document order.
	Chunks []Chunk
	// Tokens is the estimated size of [Loaded.Text].
	Tokens int
	// Complete reports whether Chunks hold the whole document.
	Complete bool
}

// Text returns the selected chunks as one text: adjacent chunks are joined
// without repeating their overlap, and a gap between chunks that are not
// adjacent is marked with a line "[…]".
func (l Loaded) Text() string {
	var b strings.Builder
	end := -1
	for i, c := range l.Chunks {
		switch {
		case i > 0 && c.Start <= end:
			b.WriteString(c.Text[end-c.Start:])
		default:
			if i > 0 {
				b.WriteString("\n[…]\n")
			}
			b.WriteString(c.Text)
		}
		end = max(end, c.End)
	}
	return b.String()
}

// Load returns chunks of a ready document: those LoadOptions.Chunks names
// (all by default), the most relevant to LoadOptions.Query first when one
// is given, as many as fit LoadOptions.Budget. A document that is not
// ready fails with [ErrNotReady]; a budget smaller than every candidate
// chunk fails with an error saying how much is needed.
func Load(ctx context.Context, s Store, id string, opts LoadOptions) (Loaded, error) {
	doc, err := s.Get(ctx, id)
	if err != nil {
		return Loaded{}, err
	}
	switch doc.Status {
	case StatusReady:
	case StatusFailed:
		return Loaded{}, fmt.Errorf("%w: %q (%s) failed to process: %s", ErrNotReady, doc.Name, id, doc.Error)
	default:
		return Loaded{}, fmt.Errorf("%w: %q (%s) is %s; wait for it (Processor.Wait) and load it again", ErrNotReady, doc.Name, id, doc.Status)
	}
	all, err := s.Chunks(ctx, id)
	if err != nil {
		return Loaded{}, err
	}
	cands := all
	if opts.Chunks != nil {
		cands = make([]Chunk, 0, len(opts.Chunks))
		for _, i := range opts.Chunks {
			if i < 0 || i >= len(all) {
				return Loaded{}, fmt.Errorf("document: %q has chunks 0 to %d; chunk %d does not exist", doc.Name, len(all)-1, i)
			}
			cands = append(cands, all[i])
		}
		slices.SortFunc(cands, func(a, b Chunk) int { return cmp.Compare(a.Index, b.Index) })
		cands = slices.CompactFunc(cands, func(a, b Chunk) bool { return a.Index == b.Index })
	}
	if opts.Query != "" {
		cands = rank(cands, opts.Query)
	}
	var picked []Chunk
	used, smallest := 0, math.MaxInt
	for _, c := range cands {
		smallest = min(smallest, c.Tokens)
		if opts.Budget > 0 && used+c.Tokens > opts.Budget {
			continue
		}
		picked = append(picked, c)
		used += c.Tokens
	}
	if len(picked) == 0 && len(cands) > 0 {
		return Loaded{}, fmt.Errorf("document: a budget of %d tokens holds no chunk of %q; the smallest needs %d, raise the budget", opts.Budget, doc.Name, smallest)
	}
	slices.SortFunc(picked, func(a, b Chunk) int { return cmp.Compare(a.Index, b.Index) })
	l := Loaded{Document: doc, Chunks: picked, Complete: len(picked) == len(all)}
	l.Tokens = EstimateTokens(l.Text())
	return l, nil
}

// rank orders chunks by relevance to query, best first, ties in document
// order: the sum over the query's words of their count in the chunk times
// their inverse document frequency among the chunks.
func rank(chunks []Chunk, query string) []Chunk {
	terms := map[string]struct{}{}
	for _, w := range words(query) {
		terms[w] = struct{}{}
	}
	if len(terms) == 0 {
		return chunks
	}
	counts := make([]map[string]int, len(chunks))
	df := map[string]int{}
	for i, c := range chunks {
		counts[i] = map[string]int{}
		for w := range strings.FieldsFuncSeq(c.Text, notWordRune) {
			if len(w) < 3 {
				continue
			}
			if hasUpper(w) {
				w = strings.ToLower(w)
			}
			if _, ok := terms[w]; ok {
				if counts[i][w] == 0 {
					df[w]++
				}
				counts[i][w]++
			}
		}
	}
	scores := make([]float64, len(chunks))
	for i := range chunks {
		for w, n := range counts[i] {
			scores[i] += (1 + math.Log(float64(n))) * math.Log(1+float64(len(chunks))/float64(df[w]))
		}
	}
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	out := make([]Chunk, len(chunks))
	for i, j := range order {
		out[i] = chunks[j]
	}
	return out
}

// words returns the lower-case words of s of at least three letters or
// digits, in order.
func words(s string) []string {
	ws := strings.FieldsFunc(strings.ToLower(s), notWordRune)
	return slices.DeleteFunc(ws, func(w string) bool { return utf8.RuneCountInString(w) < 3 })
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

func hasUpper(w string) bool {
	for _, r := range w {
		if unicode.IsUpper(r) {
			return true
		}
	}
	return false
}
