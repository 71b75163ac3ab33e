// Command calculator serves the calculator and sandboxed Starlark MCP server.
//
//	calculator [-max-steps N] [-timeout D] [-http HOST:PORT [-token TOKEN]]
//
// It speaks MCP over stdio unless -http is given, in which case it serves
// streamable HTTP at http://HOST:PORT/mcp. run_code executes programs, so
// over HTTP every request must carry "Authorization: Bearer TOKEN" when a
// token is given (-token, or the environment variable CALCULATOR_TOKEN),
// and a token is required to listen on an address other than loopback.
// Programs run in worker processes, this executable started again (see
// package examples/internal/sandbox). Add it to an mcpServers
// configuration as
//
//	{"mcpServers": {"calculator": {"command": "calculator"}}}
package main

import (
	"errors"
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
	token := flag.String("token", os.Getenv("CALCULATOR_TOKEN"), "bearer token HTTP requests must carry (default $CALCULATOR_TOKEN); required to listen on a non-loopback address")
	flag.Parse()
	s, err := calculator.New(calculator.Config{MaxSteps: *steps, Timeout: *timeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := serve.Run(s, *httpAddr, serve.Auth{Token: *token, Required: true}, os.Stderr); err != nil {
		if errors.Is(err, serve.ErrNoToken) {
			err = fmt.Errorf("%w (-token or CALCULATOR_TOKEN)", err)
		}
		fmt.Fprintln(os.Stderr, "calculator:", err)
		os.Exit(1)
	}
}
