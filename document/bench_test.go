package document_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/document"
)

// BenchmarkSplit cuts a 1 MB document (the default size limit) with the
// default chunker: 1000 tokens, 125 overlap.
func BenchmarkSplit(b *testing.B) {
	text := prose(1)
	for len(text) < document.DefaultMaxSize-len(prose(8)) {
		text += "\n\n" + prose(8)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		cs, err := document.Chunker{}.Split(text)
		if err != nil {
			b.Fatal(err)
		}
		n = len(cs)
	}
	b.ReportMetric(float64(n), "chunks")
}

// BenchmarkLoadQuery ranks the 290 chunks of a 1 MB document against a
// query and keeps 4000 tokens of them.
func BenchmarkLoadQuery(b *testing.B) {
	text := prose(1)
	for len(text) < document.DefaultMaxSize-len(prose(8)) {
		text += "\n\n" + prose(8)
	}
	s := document.NewMemoryStore()
	d := document.Document{ID: "d", ConversationID: "c", Name: "big.txt", ContentType: "text/plain", Size: int64(len(text)), Status: document.StatusPending}
	if err := s.Create(b.Context(), d, []byte(text), document.Quota{}); err != nil {
		b.Fatal(err)
	}
	chunks, _ := document.Chunker{}.Split(text)
	if _, err := s.Complete(b.Context(), "d", "big", chunks); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := document.Load(b.Context(), s, "d", document.LoadOptions{Query: "revenue in region xxx", Budget: 4000}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProcess measures the pipeline's own cost per document (upload,
// chunk, 3 chunk summaries and a combine from a scripted model, store,
// wait), without model latency.
func BenchmarkProcess(b *testing.B) {
	model := llmtest.New().Default(llmtest.Text("Summary."))
	p, err := document.NewProcessor(document.Config{Store: document.NewMemoryStore(), Summarizer: &document.LLMSummarizer{Model: model},
		Chunker: document.Chunker{Size: 50, Overlap: 10}, Limits: document.Limits{MaxPerConversation: -1}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(b.Context())
	b.ReportAllocs()
	for b.Loop() {
		d, err := p.Upload(b.Context(), upload("c", "plan.txt", threeChunks))
		if err != nil {
			b.Fatal(err)
		}
		if d, err = p.Wait(b.Context(), d.ID); err != nil || d.Status != document.StatusReady {
			b.Fatal(d.Status, d.Error, err)
		}
	}
}
