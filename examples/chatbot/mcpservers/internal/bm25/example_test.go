package bm25_test

import (
	"fmt"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/bm25"
)

func Example() {
	ix, err := bm25.New([]bm25.Document{
		{ID: "pricing", Text: "Pricing tiers: Starter, Team and Enterprise. Prices are per seat."},
		{ID: "support", Text: "Support hours and response times for each tier."},
		{ID: "security", Text: "Encryption at rest and in transit; SOC 2 report on request."},
	}, bm25.Params{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, hit := range ix.Search("How are prices set for each tier?", 3) {
		fmt.Printf("%s %.3f\n", hit.ID, hit.Score)
	}
	// Output:
	// pricing 1.741
	// support 1.541
}
