package document

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Defaults of [Chunker] fields left zero.
const (
	// DefaultChunkSize is the largest chunk, in estimated tokens.
	DefaultChunkSize = 1000
	// DefaultChunkOverlap is the overlap between consecutive chunks, in
	// estimated tokens.
	DefaultChunkOverlap = 125
)

// Chunker cuts text into overlapping chunks. Sizes are in estimated tokens
// of four bytes each ([EstimateTokens]), so a chunk of Size tokens holds at
// most 4×Size bytes of UTF-8.
//
// A chunk ends, by preference, at a paragraph break (a blank line), then
// at a line break, then after a sentence (". ", "! ", "? " and the like),
// then after a space; only text without any of these in the second half of
// the chunk is cut mid-word, and never inside a rune (a byte of invalid
// UTF-8 counts as a rune of its own, as when ranging over a string). The next chunk starts
// about Overlap tokens before the previous one ended, moved forward to the
// start of a word, so a sentence cut at a boundary is whole in one of the
// two chunks. Chunking is deterministic: the same text gives the same
// chunks.
//
// The zero value uses [DefaultChunkSize] and [DefaultChunkOverlap].
type Chunker struct {
	// Size is the largest chunk in estimated tokens. Zero means
	// [DefaultChunkSize].
	Size int
	// Overlap is how much of the end of a chunk the next one repeats, in
	// estimated tokens; at most half of Size. Zero means
	// [DefaultChunkOverlap]; negative means no overlap.
	Overlap int
}

func (c Chunker) sizes() (size, overlap int, err error) {
	size, overlap = c.Size, c.Overlap
	if size == 0 {
		size = DefaultChunkSize
	}
	if overlap == 0 {
		overlap = DefaultChunkOverlap
	}
	if overlap < 0 {
		overlap = 0
	}
	if size < 2 {
		return 0, 0, fmt.Errorf("document: Chunker.Size is %d; use at least 2 tokens (the default is %d)", c.Size, DefaultChunkSize)
	}
	if overlap > size/2 {
		return 0, 0, fmt.Errorf("document: Chunker.Overlap is %d tokens, more than half of Size (%d); lower it to at most %d", overlap, size, size/2)
	}
	return size * 4, overlap * 4, nil
}

// Validate reports whether the chunker's settings are usable.
func (c Chunker) Validate() error {
	_, _, err := c.sizes()
	return err
}

// breaks are the boundaries a chunk may end at, best first. Each ends the
// chunk after the separator.
var breaks = [][]string{
	{"\n\n"},
	{"\n"},
	{". ", "! ", "? ", "; ", ".\t", "。", "！", "？"},
	{" ", "\t"},
}

// Split cuts text into chunks. Chunk i is text[Start:End]; the chunks
// cover text from its first byte to its last, in order. Empty text has no
// chunks.
func (c Chunker) Split(text string) ([]Chunk, error) {
	maxB, ovB, err := c.sizes()
	if err != nil {
		return nil, err
	}
	var chunks []Chunk
	start, runeStart := 0, 0
	for start < len(text) {
		end := len(text)
		if end-start > maxB {
			end = cutPoint(text, start, maxB, ovB)
		}
		runeEnd := runeStart + utf8.RuneCountInString(text[start:end])
		chunks = append(chunks, Chunk{
			Index: len(chunks), Text: text[start:end],
			Start: start, End: end, RuneStart: runeStart, RuneEnd: runeEnd,
			Tokens: EstimateTokens(text[start:end]),
		})
		if end == len(text) {
			break
		}
		next := nextStart(text, start, end, ovB)
		runeStart = runeEnd - utf8.RuneCountInString(text[next:end])
		start = next
	}
	return chunks, nil
}

// cutPoint returns the end of the chunk starting at start, which is longer
// than maxB: the best boundary in the chunk's second half (and past the
// overlap, so that the next chunk starts after this one), else the last
// rune boundary within maxB.
func cutPoint(text string, start, maxB, ovB int) int {
	limit := start + maxB
	lo := start + max(maxB/2, ovB+1)
	window := text[lo:limit]
	for _, seps := range breaks {
		best := -1
		for _, sep := range seps {
			if i := strings.LastIndex(window, sep); i >= 0 && lo+i+len(sep) > best {
				best = lo + i + len(sep)
			}
		}
		if best > lo {
			return best
		}
	}
	end := limit
	for end > lo && inRune(text, end) {
		end--
	}
	return end
}

// nextStart returns where the chunk after [start, end) begins: ovB bytes
// before end, moved forward to the start of a word if one begins within
// half the overlap, else to a rune boundary. It is always past start.
func nextStart(text string, start, end, ovB int) int {
	if ovB == 0 {
		return end
	}
	target := max(end-ovB, start+1)
	if i := strings.IndexAny(text[target:min(end, target+ovB/2)], " \t\n"); i >= 0 {
		return target + i + 1
	}
	for target < end && inRune(text, target) {
		target++
	}
	return target
}

// inRune reports whether byte offset i of text falls inside a rune as
// ranging over text decodes it: inside a valid multi-byte encoding. A byte
// of invalid UTF-8 decodes as a rune of its own (utf8.RuneError, one byte),
// so the offsets around it are boundaries; utf8.RuneStart alone would take
// a stray continuation byte for the middle of a rune.
func inRune(text string, i int) bool {
	for j := i - 1; j >= 0 && j >= i-utf8.UTFMax+1; j-- {
		if utf8.RuneStart(text[j]) {
			// A lead byte never lies inside another valid encoding.
			_, n := utf8.DecodeRuneInString(text[j:])
			return n > i-j
		}
	}
	return false
}
