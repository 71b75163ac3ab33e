// Command calculator serves the calculator and sandboxed Starlark MCP server.
//
//	calculator [-max-steps N] [-timeout D] [-http HOST:PORT]
//
// It speaks MCP over stdio unless -http is given, in which case it serves
// streamable HTTP at http://HOST:PORT/mcp. Add it to an mcpServers
// configuration as
//
//	{"mcpServers": {"calculator": {"command": "calculator"}}}
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/serve"
)

func main() {
	steps := flag.Uint64("max-steps", calculator.DefaultMaxSteps, "Starlark execution steps allowed per run_code call")
	timeout := flag.Duration("timeout", calculator.DefaultTimeout, "wall time allowed per run_code call")
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	flag.Parse()
	s, err := calculator.New(calculator.Config{MaxSteps: *steps, Timeout: *timeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := serve.Run(s, *httpAddr, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "calculator:", err)
		os.Exit(1)
	}
}
