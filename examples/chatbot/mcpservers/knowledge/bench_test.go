package knowledge_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/clienttest"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/knowledge"
)

// BenchmarkSearch measures one search_knowledge call over the bundled corpus
// through an in-process MCP client: argument decoding, BM25 ranking of every
// passage, and building the text and structured result.
func BenchmarkSearch(b *testing.B) {
	s, err := knowledge.New(knowledge.Config{})
	if err != nil {
		b.Fatal(err)
	}
	c := clienttest.InProcess(b, s, clienttest.Options{})
	args := map[string]any{"query": "compare our pricing to competitors", "top_k": 5}
	b.ReportAllocs()
	for b.Loop() {
		res, _, err := c.Call(b.Context(), "search_knowledge", args, false)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
