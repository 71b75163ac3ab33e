// Command knowledge serves the knowledge-base MCP server over stdio.
//
//	knowledge [-docs DIR]
//
// Without -docs it searches the bundled Acme Analytics documents; with it,
// the *.md files in DIR. Add it to an mcpServers configuration as
//
//	{"mcpServers": {"knowledge": {"command": "knowledge"}}}
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"

	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/knowledge"
)

func main() {
	docs := flag.String("docs", "", "directory of markdown documents (default: the bundled corpus)")
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
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "knowledge:", err)
		os.Exit(1)
	}
}
