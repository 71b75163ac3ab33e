// Command knowledge serves the knowledge-base MCP server.
//
//	knowledge [-docs DIR] [-http HOST:PORT]
//
// Without -docs it searches the bundled Acme Analytics documents; with it,
// the *.md files in DIR. It speaks MCP over stdio unless -http is given, in
// which case it serves streamable HTTP at http://HOST:PORT/mcp. Add it to an
// mcpServers configuration as
//
//	{"mcpServers": {"knowledge": {"command": "knowledge"}}}
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/serve"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/knowledge"
)

func main() {
	docs := flag.String("docs", "", "directory of markdown documents (default: the bundled corpus)")
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	flag.Parse()
	var fsys fs.FS
	if *docs != "" {
		fsys = os.DirFS(*docs)
	}
	s, err := knowledge.New(knowledge.Config{Documents: fsys})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := serve.Run(s, *httpAddr, serve.Auth{}, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "knowledge:", err)
		os.Exit(1)
	}
}
