package knowledge_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/knowledge"
)

// Start the knowledge server in-process and search it with an mcp-go client.
func Example() {
	ctx := context.Background()
	srv, err := knowledge.New(knowledge.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "example", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		fmt.Println(err)
		return
	}

	req := mcp.CallToolRequest{}
	req.Params.Name = "search_knowledge"
	req.Params.Arguments = map[string]any{"query": "competitor pricing Northwind", "top_k": 2}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Structured content arrives as decoded JSON; decode it into the
	// package's result type.
	var result knowledge.SearchResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &result); err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range result.Results {
		fmt.Printf("%d. %s %q\n", p.Rank, p.Document, p.Section)
	}
	// Output:
	// 1. competitor-comparison "Northwind Metrics"
	// 2. competitor-comparison ""
}
