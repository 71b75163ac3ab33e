package websearch_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/websearch"
)

// Start the offline web search in-process and look up a competitor's prices.
func Example() {
	ctx := context.Background()
	srv, err := websearch.New(websearch.Config{})
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
	req.Params.Name = "web_search"
	req.Params.Arguments = map[string]any{"query": "Initech Dashboards pricing", "max_results": 1}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	var found websearch.SearchResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &found); err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range found.Results {
		fmt.Println(r.URL)
		fmt.Println(r.Snippet)
	}
	// Output:
	// https://example.net/initech/pricing
	// Initech Dashboards: Free for one user, Basic $15 and Plus $35 per user per month. Simple dashboards for startups.
}
