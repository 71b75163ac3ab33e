// Package mcpservers lists the MCP servers the reference chatbot bundles so
// that it runs offline with no configuration. Each is written in Go with
// github.com/mark3labs/mcp-go and lives in its own package:
//
//   - [knowledge]: BM25 search over bundled markdown documents about the
//     fictional company Acme Analytics, and a book_demo tool that asks the
//     user for details through elicitation.
//   - [calculator]: arithmetic, sandboxed Starlark programs with step,
//     time, memory and output limits, each run in a worker process, and
//     charts returned as a PNG image and a data_table widget.
//   - [websearch]: an offline "web search" over bundled pages, including
//     competitors' pricing.
//
// Each package's New returns a *server.MCPServer that a program can connect
// to in-process (client.NewInProcessClient) or serve itself; the commands
// under cmd/ serve the same servers over stdio (or streamable HTTP with
// -http), for use as subprocesses or in an mcpServers configuration.
package mcpservers

import (
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/knowledge"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/websearch"
)

// Server is one bundled MCP server.
type Server struct {
	// Name identifies the server in configuration and tool listings:
	// "knowledge", "calculator" or "websearch", as the commands are named.
	Name string
	// Description says in one sentence what the server offers.
	Description string
	// New builds the server with its default configuration. Each call
	// returns a new, independent server.
	New func() (*server.MCPServer, error)
}

// Bundled returns the bundled servers in a fixed order: knowledge,
// calculator, websearch.
func Bundled() []Server {
	return []Server{
		{
			Name:        "knowledge",
			Description: "Searches the Acme Analytics knowledge base (products, pricing, competitors, support, security) and books demos.",
			New:         func() (*server.MCPServer, error) { return knowledge.New(knowledge.Config{}) },
		},
		{
			Name:        "calculator",
			Description: "Evaluates arithmetic, runs sandboxed Starlark programs and draws bar charts with data tables.",
			New:         func() (*server.MCPServer, error) { return calculator.New(calculator.Config{}) },
		},
		{
			Name:        "websearch",
			Description: "Searches an offline snapshot of the web, including competitors' pricing pages, and fetches pages.",
			New:         func() (*server.MCPServer, error) { return websearch.New(websearch.Config{}) },
		},
	}
}
