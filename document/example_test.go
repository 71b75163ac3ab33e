package document_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/document"
)

func Example() {
	ctx := context.Background()
	// A scripted model stands in for a real one (any model.Model: a
	// provider model of agent/provider, or an *agent.Client).
	model := llmtest.New().
		On("Part 1 of 2", llmtest.Text("Prices of the three plans.")).
		On("Part 2 of 2", llmtest.Text("Support hours and contacts.")).
		On("Summaries of its parts", llmtest.Text("Plans, prices and support."))

	store := document.NewMemoryStore()
	p, err := document.NewProcessor(document.Config{
		Store:      store,
		Summarizer: &document.LLMSummarizer{Model: model},
		Chunker:    document.Chunker{Size: 40, Overlap: 8},
		NewID:      func() string { return "doc-1" },
	})
	if err != nil {
		panic(err)
	}
	defer p.Close(ctx)

	text := strings.Repeat("Basic costs 5 euros, Pro 12, Team 30 per seat. ", 2) + "\n\n" +
		strings.Repeat("Support answers weekdays 9 to 17 at help@example.com. ", 2)
	doc, err := p.Upload(ctx, document.Upload{
		ConversationID: "conv-1",
		Name:           "pricing.md",
		ContentType:    "text/markdown",
		Content:        []byte(text),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("uploaded:", doc.Status)

	doc, err = p.Wait(ctx, doc.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println("processed:", doc.Status)

	// What the supervisor sees.
	overview, _ := document.Overview(ctx, store, "conv-1")
	fmt.Println(overview)

	// What it loads for a question, within 40 tokens: the relevant chunk,
	// which starts with the end of the one before (the overlap).
	l, err := document.Load(ctx, store, doc.ID, document.LoadOptions{Query: "When does support answer?", Budget: 40})
	if err != nil {
		panic(err)
	}
	fmt.Printf("loaded chunk %d of %d: %q\n", l.Chunks[0].Index, l.Document.Chunks, l.Text())
	// Output:
	// uploaded: pending
	// processed: ready
	// - "pricing.md" (id doc-1, ready, 2 chunks, ~51 tokens): Plans, prices and support.
	// loaded chunk 1 of 2: "Pro 12, Team 30 per seat. \n\nSupport answers weekdays 9 to 17 at help@example.com. Support answers weekdays 9 to 17 at help@example.com. "
}
