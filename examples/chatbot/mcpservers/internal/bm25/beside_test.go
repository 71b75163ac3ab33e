package bm25_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/bm25"
)

// TestSearchTermsBeside checks that an extra term marked Beside counts
// only in a document that holds one of the search's own terms, and that
// one not marked counts anywhere.
func TestSearchTermsBeside(t *testing.T) {
	ix, err := bm25.New([]bm25.Document{
		{ID: "a", Text: "customers use the platform"},
		{ID: "b", Text: "customers are billed yearly"},
	}, bm25.Params{})
	if err != nil {
		t.Fatal(err)
	}
	own := bm25.Tokenize("clients platform")
	hits := ix.SearchTerms(own, []bm25.Term{{Text: "custom", Weight: 0.5, Beside: true}}, 0)
	if len(hits) != 1 || hits[0].ID != "a" {
		t.Errorf("Beside term: hits %v, want only a", hits)
	}
	plain := ix.SearchTerms(own, []bm25.Term{{Text: "custom", Weight: 0.5}}, 0)
	if len(plain) != 2 || plain[0].ID != "a" || plain[0].Score != hits[0].Score {
		t.Errorf("plain term: hits %v, want a (scored as with Beside) then b", plain)
	}
}
