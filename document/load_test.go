package document_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/google/go-cmp/cmp"
)

// readyDoc stores text as a ready document of conversation conv, cut into
// chunks of Size 50, Overlap 10, each summarized by its first words.
func readyDoc(t *testing.T, s document.Store, id, conv, name, text string) []document.Chunk {
	t.Helper()
	d := document.Document{ID: id, ConversationID: conv, Name: name, ContentType: "text/plain",
		Size: int64(len(text)), Status: document.StatusPending, Tokens: document.EstimateTokens(text), Created: time.Now()}
	if err := s.Create(t.Context(), d, []byte(text), document.Quota{}); err != nil {
		t.Fatal(err)
	}
	chunks, err := document.Chunker{Size: 50, Overlap: 10}.Split(text)
	if err != nil {
		t.Fatal(err)
	}
	for i := range chunks {
		chunks[i].Summary = strings.Join(strings.Fields(chunks[i].Text)[:2], " ")
	}
	if _, err := s.Complete(t.Context(), id, name+" summary", chunks); err != nil {
		t.Fatal(err)
	}
	return chunks
}

func indexes(cs []document.Chunk) []int {
	out := make([]int, len(cs))
	for i, c := range cs {
		out[i] = c.Index
	}
	return out
}

func TestLoad(t *testing.T) {
	t.Parallel()
	s := document.NewMemoryStore()
	chunks := readyDoc(t, s, "d1", "c1", "plan.txt", threeChunks)

	all, err := document.Load(t.Context(), s, "d1", document.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !all.Complete || all.Text() != threeChunks || all.Tokens != document.EstimateTokens(threeChunks) {
		t.Errorf("Load all: complete %v, %d tokens; want the whole text", all.Complete, all.Tokens)
	}

	for _, tc := range []struct {
		name string
		opts document.LoadOptions
		want []int
	}{
		{"query ranks", document.LoadOptions{Query: "What is on the roadmap?", Budget: chunks[1].Tokens}, []int{1}},
		{"query, room for two", document.LoadOptions{Query: "contact data", Budget: chunks[2].Tokens + chunks[0].Tokens}, []int{0, 2}},
		{"budget in order", document.LoadOptions{Budget: chunks[0].Tokens + chunks[1].Tokens}, []int{0, 1}},
		{"chosen chunks", document.LoadOptions{Chunks: []int{2, 0, 2}}, []int{0, 2}},
		{"query matches nothing", document.LoadOptions{Query: "zebra", Budget: chunks[0].Tokens}, []int{0}},
	} {
		l, err := document.Load(t.Context(), s, "d1", tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, indexes(l.Chunks)); diff != "" {
			t.Errorf("%s: chunk indexes (-want +got):\n%s", tc.name, diff)
		}
		if l.Complete {
			t.Errorf("%s: Complete is true for a part", tc.name)
		}
	}

	gap, _ := document.Load(t.Context(), s, "d1", document.LoadOptions{Chunks: []int{0, 2}})
	if want := chunks[0].Text + "\n[…]\n" + chunks[2].Text; gap.Text() != want {
		t.Errorf("Text of chunks 0 and 2 = %q; want them joined by a gap mark", gap.Text())
	}

	if _, err := document.Load(t.Context(), s, "d1", document.LoadOptions{Budget: 3}); err == nil || !strings.Contains(err.Error(), "raise the budget") {
		t.Errorf("Load with a budget below every chunk: %v; want an error saying to raise it", err)
	}
	if _, err := document.Load(t.Context(), s, "d1", document.LoadOptions{Chunks: []int{3}}); err == nil || !strings.Contains(err.Error(), "chunks 0 to 2") {
		t.Errorf("Load of chunk 3: %v; want an error naming the range", err)
	}
	if _, err := document.Load(t.Context(), s, "nope", document.LoadOptions{}); !errors.Is(err, document.ErrNotFound) {
		t.Errorf("Load of an unknown id: %v; want ErrNotFound", err)
	}
	pending := document.Document{ID: "p", ConversationID: "c1", Name: "p.txt", ContentType: "text/plain", Size: 1, Status: document.StatusPending}
	if err := s.Create(t.Context(), pending, []byte("x"), document.Quota{}); err != nil {
		t.Fatal(err)
	}
	if _, err := document.Load(t.Context(), s, "p", document.LoadOptions{}); !errors.Is(err, document.ErrNotReady) || !strings.Contains(err.Error(), "Processor.Wait") {
		t.Errorf("Load of a pending document: %v; want ErrNotReady saying to wait", err)
	}
}

func TestContextSource(t *testing.T) {
	t.Parallel()
	s := document.NewMemoryStore()
	chunks := readyDoc(t, s, "d1", "c1", "plan.txt", threeChunks)
	readyDoc(t, s, "d2", "c2", "other.txt", "Another conversation's document.")
	failed := document.Document{ID: "d3", ConversationID: "c1", Name: "broken.txt", ContentType: "text/plain", Size: 1, Status: document.StatusPending, Created: time.Now()}
	if err := s.Create(t.Context(), failed, []byte("x"), document.Quota{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetStatus(t.Context(), "d3", document.StatusFailed, "model down"); err != nil {
		t.Fatal(err)
	}

	asm := memory.NewAssembler(memory.AssemblerConfig{Budget: -1})
	if err := asm.Register("documents", document.ContextSource(s, chunks[1].Tokens)); err != nil {
		t.Fatal(err)
	}
	if err := asm.Check("documents.summaries", "documents.load(d1)"); err != nil {
		t.Fatal(err)
	}
	if err := asm.Check("documents.load"); err == nil {
		t.Error(`Check("documents.load") without an id succeeded; want an error`)
	}

	turn := memory.NewTurn("c1", "What is on the roadmap?")
	got, err := asm.Assemble(t.Context(), turn, "documents.summaries", "documents.load(d1)")
	if err != nil {
		t.Fatal(err)
	}
	if got.Parts[0].Priority != memory.PriorityTurn || got.Parts[1].Priority != memory.PriorityRequested {
		t.Errorf("priorities %d and %d; want PriorityTurn for summaries, PriorityRequested for a load", got.Parts[0].Priority, got.Parts[1].Priority)
	}
	summaries := got.Parts[0].Text()
	want := `- "plan.txt" (id` + " d1, ready, 3 chunks, ~" + strconv.Itoa(document.EstimateTokens(threeChunks)) + " tokens): plan.txt summary\n" +
		`- "broken.txt" (id` + " d3, failed, ~0 tokens): processing failed: model down"
	if summaries != want {
		t.Errorf("documents.summaries:\n got %q\nwant %q", summaries, want)
	}
	loaded := got.Parts[1].Text()
	if !strings.HasPrefix(loaded, `Document "plan.txt" (id`+" d1, 1 of 3 chunks, the most relevant):\n") || !strings.Contains(loaded, chunks[1].Text) {
		t.Errorf("documents.load(d1) = %q; want the roadmap chunk under a header", loaded)
	}

	// A failed document yields a note, not an error.
	got, err = asm.Assemble(t.Context(), turn, "documents.load(d3)")
	if err != nil {
		t.Fatal(err)
	}
	if want := `Document "broken.txt" (id d3)` + " could not be processed (model down); its content is not available."; got.Parts[0].Text() != want {
		t.Errorf("documents.load(d3) = %q; want %q", got.Parts[0].Text(), want)
	}

	// Another conversation's document is not found.
	_, err = asm.Assemble(t.Context(), turn, "documents.load(d2)")
	if !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("loading another conversation's document: %v; want memory.ErrNotFound", err)
	}
}
