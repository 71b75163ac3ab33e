// Command calculator serves the calculator and sandboxed Starlark MCP server
// over stdio.
//
//	calculator [-max-steps N] [-timeout D]
//
// Add it to an mcpServers configuration as
//
//	{"mcpServers": {"calculator": {"command": "calculator"}}}
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
)

func main() {
	steps := flag.Uint64("max-steps", calculator.DefaultMaxSteps, "Starlark execution steps allowed per run_code call")
	timeout := flag.Duration("timeout", calculator.DefaultTimeout, "wall time allowed per run_code call")
	flag.Parse()
	s, err := calculator.New(calculator.Config{MaxSteps: *steps, Timeout: *timeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "calculator:", err)
		os.Exit(1)
	}
}
