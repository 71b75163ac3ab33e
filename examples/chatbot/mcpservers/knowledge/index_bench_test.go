package knowledge

import (
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/bm25"
)

// BenchmarkIndexSearch measures BM25 ranking alone over the passages of the
// bundled corpus, without the MCP round trip.
func BenchmarkIndexSearch(b *testing.B) {
	docs, err := loadDocuments(Corpus())
	if err != nil {
		b.Fatal(err)
	}
	var indexed []bm25.Document
	for _, d := range docs {
		for _, p := range d.passages {
			indexed = append(indexed, bm25.Document{ID: d.name + "#" + p.section, Text: d.title + "\n" + p.section + "\n" + p.text})
		}
	}
	ix, err := bm25.New(indexed, bm25.Params{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if hits := ix.Search("compare our pricing to competitors", 5); len(hits) == 0 {
			b.Fatal("no hits")
		}
	}
}
