package document_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/document"
	"github.com/google/go-cmp/cmp"
)

// checkChunks asserts the chunker's contract for text cut with c.
func checkChunks(t *testing.T, c document.Chunker, text string, chunks []document.Chunk) {
	t.Helper()
	maxB, ovB := 4*c.Size, 4*c.Overlap
	if c.Overlap < 0 {
		ovB = 0
	}
	if text == "" {
		if len(chunks) != 0 {
			t.Fatalf("empty text: %d chunks; want none", len(chunks))
		}
		return
	}
	if len(chunks) == 0 {
		t.Fatal("no chunks for non-empty text")
	}
	if chunks[0].Start != 0 || chunks[len(chunks)-1].End != len(text) {
		t.Fatalf("chunks cover [%d, %d) of %d bytes; want all of it", chunks[0].Start, chunks[len(chunks)-1].End, len(text))
	}
	valid := utf8.ValidString(text)
	for i, ch := range chunks {
		if ch.Index != i {
			t.Fatalf("chunk %d has Index %d", i, ch.Index)
		}
		if ch.Text != text[ch.Start:ch.End] {
			t.Fatalf("chunk %d: Text is not text[%d:%d]", i, ch.Start, ch.End)
		}
		if len(ch.Text) > maxB || ch.Tokens > c.Size {
			t.Fatalf("chunk %d has %d bytes (%d tokens); the limit is %d bytes (%d tokens)", i, len(ch.Text), ch.Tokens, maxB, c.Size)
		}
		if ch.Tokens != document.EstimateTokens(ch.Text) {
			t.Fatalf("chunk %d: Tokens %d; want %d", i, ch.Tokens, document.EstimateTokens(ch.Text))
		}
		if ch.RuneStart != utf8.RuneCountInString(text[:ch.Start]) || ch.RuneEnd != utf8.RuneCountInString(text[:ch.End]) {
			t.Fatalf("chunk %d: runes [%d, %d); want [%d, %d)", i, ch.RuneStart, ch.RuneEnd,
				utf8.RuneCountInString(text[:ch.Start]), utf8.RuneCountInString(text[:ch.End]))
		}
		if valid && !utf8.ValidString(ch.Text) {
			t.Fatalf("chunk %d splits a rune: %q", i, ch.Text)
		}
		if i == len(chunks)-1 {
			continue
		}
		if len(ch.Text) < maxB/2 {
			t.Fatalf("chunk %d of %d has %d bytes; only the last may be shorter than half the size (%d)", i, len(chunks), len(ch.Text), maxB/2)
		}
		next := chunks[i+1]
		if next.Start <= ch.Start || next.Start > ch.End {
			t.Fatalf("chunk %d starts at %d; want after %d and at most %d (no gap)", i+1, next.Start, ch.Start, ch.End)
		}
		overlap := ch.End - next.Start
		if lo := min(ovB-ovB/2, max(ovB-3, 0)); overlap < lo || overlap > ovB {
			t.Fatalf("chunks %d and %d overlap by %d bytes; want %d to %d", i, i+1, overlap, lo, ovB)
		}
	}
	// Loading every chunk gives back the text.
	if got := (document.Loaded{Chunks: chunks}).Text(); got != text {
		t.Fatalf("joined chunks differ from the text:\n got %q\nwant %q", got, text)
	}
}

func prose(paragraphs int) string {
	var b strings.Builder
	for p := range paragraphs {
		if p > 0 {
			b.WriteString("\n\n")
		}
		for s := range 3 + p%4 {
			b.WriteString("The quarterly report shows revenue grew in region ")
			b.WriteString(strings.Repeat("x", s))
			b.WriteString(" while costs fell. ")
		}
		b.WriteString("Next steps follow.")
	}
	return b.String()
}

func TestSplitProperties(t *testing.T) {
	t.Parallel()
	texts := map[string]string{
		"prose":         prose(12),
		"one long word": strings.Repeat("a", 5000),
		"japanese":      strings.Repeat("日本語の文章です。句読点があります。", 80),
		"emoji":         strings.Repeat("🙂🎉 ", 300),
		"lines":         strings.Repeat("id,name,price\n1,widget,2.50\n", 100),
		"json":          `{"items":[` + strings.Repeat(`{"name":"widget","price":2.5},`, 120) + `{}]}`,
		"short":         "Just one sentence.",
		"spaces":        strings.Repeat(" ", 900),
	}
	configs := []document.Chunker{{Size: 50, Overlap: 10}, {Size: 8, Overlap: 4}, {Size: 100, Overlap: -1}, {Size: 2, Overlap: 1}, {Size: 300, Overlap: 0}}
	for name, text := range texts {
		for _, c := range configs {
			if c.Overlap == 0 {
				c.Overlap = document.DefaultChunkOverlap
				if c.Overlap > c.Size/2 {
					continue
				}
			}
			chunks, err := c.Split(text)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, c, err)
			}
			t.Run(name, func(t *testing.T) { checkChunks(t, c, text, chunks) })
		}
	}
}

func TestSplitPrefersBoundaries(t *testing.T) {
	t.Parallel()
	text := prose(10)
	chunks, err := document.Chunker{Size: 200, Overlap: 20}.Split(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 3 {
		t.Fatalf("%d chunks; want several", len(chunks))
	}
	for _, c := range chunks[:len(chunks)-1] {
		if !strings.HasSuffix(c.Text, "\n\n") {
			t.Errorf("chunk %d ends with %q; want a paragraph break", c.Index, c.Text[len(c.Text)-10:])
		}
	}
	// Without paragraphs, chunks end after a sentence.
	flat := strings.ReplaceAll(text, "\n\n", " ")
	chunks, err = document.Chunker{Size: 200, Overlap: 20}.Split(flat)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chunks[:len(chunks)-1] {
		if !strings.HasSuffix(c.Text, ". ") {
			t.Errorf("chunk %d ends with %q; want the end of a sentence", c.Index, c.Text[len(c.Text)-10:])
		}
		if prev := flat[chunks[c.Index+1].Start-1]; prev != ' ' {
			t.Errorf("chunk %d starts mid-word (after %q)", c.Index+1, prev)
		}
	}
}

func TestSplitDeterministic(t *testing.T) {
	t.Parallel()
	text := prose(30)
	a, err := document.Chunker{}.Split(text)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := document.Chunker{}.Split(text)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two splits differ:\n%s", diff)
	}
}

func TestChunkerValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []document.Chunker{{Size: 1}, {Size: -5}, {Size: 100, Overlap: 51}, {Size: 10}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: Validate succeeded; want an error", c)
		}
		if _, err := c.Split("text"); err == nil {
			t.Errorf("%+v: Split succeeded; want an error", c)
		}
	}
	if err := (document.Chunker{}).Validate(); err != nil {
		t.Errorf("zero Chunker: %v", err)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add(prose(3), 20, 5)
	f.Add("日本語の文章です。\n\n🙂🎉 a b c", 3, 1)
	f.Add("\xff\xfe invalid \xc3", 2, 1)
	f.Add(strings.Repeat("ab ", 100), 5, 0)
	f.Fuzz(func(t *testing.T, text string, size, overlap int) {
		size = 2 + int(uint(size)%300)
		overlap = int(uint(overlap) % uint(size/2+1))
		if overlap == 0 {
			overlap = -1
		}
		c := document.Chunker{Size: size, Overlap: overlap}
		chunks, err := c.Split(text)
		if err != nil {
			t.Fatal(err)
		}
		checkChunks(t, c, text, chunks)
	})
}
