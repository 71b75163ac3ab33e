// Command websearch serves the offline web-search MCP server over stdio.
// Add it to an mcpServers configuration as
//
//	{"mcpServers": {"websearch": {"command": "websearch"}}}
package main

import (
	"fmt"
	"os"

	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/websearch"
)

func main() {
	s, err := websearch.New(websearch.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "websearch:", err)
		os.Exit(1)
	}
}
