// Command websearch serves the offline web-search MCP server.
//
//	websearch [-http HOST:PORT]
//
// It speaks MCP over stdio unless -http is given, in which case it serves
// streamable HTTP at http://HOST:PORT/mcp. Add it to an mcpServers
// configuration as
//
//	{"mcpServers": {"websearch": {"command": "websearch"}}}
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/serve"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/websearch"
)

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	flag.Parse()
	s, err := websearch.New(websearch.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := serve.Run(s, *httpAddr, serve.Auth{}, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "websearch:", err)
		os.Exit(1)
	}
}
