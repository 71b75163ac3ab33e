package document_test

import (
	"context"
	"maps"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/document"
)

// heldSummarizer summarizes once open is closed.
type heldSummarizer struct{ open chan struct{} }

func (h heldSummarizer) wait(ctx context.Context) error {
	select {
	case <-h.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h heldSummarizer) SummarizeChunk(ctx context.Context, _ document.Document, _ document.Chunk) (string, error) {
	return "part", h.wait(ctx)
}

func (h heldSummarizer) Combine(ctx context.Context, _ document.Document, _ []string) (string, error) {
	return "summary", h.wait(ctx)
}

// TestProcessorOnFinish checks that OnFinish reports every queued
// document once, a document deleted while queued too (OnChange does not),
// and before Wait returns it.
func TestProcessorOnFinish(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	finished := map[string]int{}
	store := document.NewMemoryStore()
	held := heldSummarizer{open: make(chan struct{})}
	p := newProcessor(t, document.Config{
		Store: store, Summarizer: held, Workers: 1, Queue: 4,
		OnFinish: func(id string) {
			mu.Lock()
			finished[id]++
			mu.Unlock()
		},
	})
	var ids []string
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		d, err := p.Upload(t.Context(), upload("c1", name, "some text"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	if err := store.Delete(t.Context(), ids[1]); err != nil {
		t.Fatal(err)
	}
	close(held.open)
	// One worker takes the documents in order: once the last is done,
	// the others are finished too.
	for _, id := range []string{ids[0], ids[2]} {
		if _, err := p.Wait(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	got := maps.Clone(finished)
	mu.Unlock()
	want := map[string]int{ids[0]: 1, ids[1]: 1, ids[2]: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OnFinish calls per document (-want +got):\n%s", diff)
	}
}
