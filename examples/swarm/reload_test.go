package swarm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/websearch"
	"github.com/agentgraph/agentgraph/examples/swarm"
)

// stdioServerEnv makes the test binary serve a bundled MCP server on its
// standard input and output, as a server of an mcpServers file.
const stdioServerEnv = "SWARM_TEST_STDIO_SERVER"

func serveStdio(name string) int {
	var srv *server.MCPServer
	var err error
	switch name {
	case "calculator":
		srv, err = calculator.New(calculator.Config{})
	case "websearch":
		srv, err = websearch.New(websearch.Config{})
	default:
		err = fmt.Errorf("no server %q", name)
	}
	if err == nil {
		err = server.ServeStdio(srv)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// writeServers writes an mcpServers file of the named stdio servers.
func writeServers(t *testing.T, path string, names ...string) {
	t.Helper()
	servers := map[string]any{}
	for _, n := range names {
		servers[n] = map[string]any{"command": os.Args[0], "env": map[string]string{stdioServerEnv: n}}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// holdAgent holds the first agent prompt until release is closed, closing
// held when it arrives; every prompt is answered by the offline model.
func holdAgent(held, release chan struct{}) *llmtest.Model {
	var once sync.Once
	return offline().OnFunc(func(c llmtest.Call) bool {
		first := false
		if strings.HasPrefix(c.Prompt, swarm.MarkerAgent) {
			once.Do(func() { first = true; close(held) })
		}
		return first
	}, llmtest.Reply{Wait: release, Model: swarm.NewOfflineModel()})
}

// TestHotReload (§7): while a task runs on the calculator of the servers
// file, the file drops the calculator and adds the web search, and the
// swarm reloads it. New tasks see the web search agent and no calculator;
// the running task still finishes on the calculator.
func TestHotReload(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "mcp.json")
	writeServers(t, file, "calculator")
	held, release := make(chan struct{}), make(chan struct{})
	client, err := agent.New(agent.Config{Model: holdAgent(held, release)})
	if err != nil {
		t.Fatal(err)
	}
	s := newSwarm(t, swarm.Config{Client: client, ServersFile: file, NoArchitect: true})
	if got := s.Agents(); !slices.Equal(got, []string{"mcp_agent_calculator"}) {
		t.Fatalf("agents = %v, want the calculator", got)
	}
	type result struct {
		out *swarm.Outcome
		err error
	}
	running := make(chan result, 1)
	go func() {
		out, err := s.Do(context.Background(), "What is 2 + 3?")
		running <- result{out, err}
	}()
	<-held

	writeServers(t, file, "websearch")
	rep, err := s.Reload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Added, []string{"websearch"}) || !slices.Equal(rep.Removed, []string{"calculator"}) {
		t.Errorf("reload = %+v, want websearch added and calculator removed", rep)
	}
	if got := s.Agents(); !slices.Equal(got, []string{"mcp_agent_websearch"}) {
		t.Errorf("agents after reload = %v, want the web search only", got)
	}

	close(release)
	r := <-running
	if r.err != nil || r.out.Status != swarm.StatusComplete || !strings.Contains(r.out.Answer, "2 + 3 = 5") {
		t.Fatalf("the running task: %v, %+v; want it complete on the calculator", r.err, r.out)
	}

	_, out := run(t, s, "Search the web for Northwind Metrics pricing")
	if len(out.Results) == 0 || out.Results[0].Agent != "mcp_agent_websearch" || !out.Results[0].OK {
		t.Errorf("next task's results = %+v, want the new web search agent", out.Results)
	}
	_, out = run(t, s, "What is 6 * 7?")
	for _, r := range out.Results {
		if r.Agent == "mcp_agent_calculator" {
			t.Errorf("a new task was routed to the removed calculator: %+v", r)
		}
	}

	// A broken file changes nothing.
	if err := os.WriteFile(file, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reload(context.Background()); err == nil {
		t.Error("reloading a broken file succeeded")
	}
	if got := s.Agents(); !slices.Equal(got, []string{"mcp_agent_websearch"}) {
		t.Errorf("agents after a broken reload = %v", got)
	}
}
