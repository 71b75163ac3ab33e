package websearch_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/clienttest"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/websearch"
)

// BenchmarkSearch measures one web_search call over the bundled pages through
// an in-process MCP client.
func BenchmarkSearch(b *testing.B) {
	s, err := websearch.New(websearch.Config{})
	if err != nil {
		b.Fatal(err)
	}
	c := clienttest.InProcess(b, s, clienttest.Options{})
	args := map[string]any{"query": "competitor pricing per user", "max_results": 5}
	b.ReportAllocs()
	for b.Loop() {
		res, _, err := c.Call(b.Context(), "web_search", args, false)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
