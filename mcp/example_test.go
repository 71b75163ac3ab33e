package mcp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
)

// A registry over the servers of a config file: list the tools, fetch the
// schema of the one selected, and call it.
func ExampleRegistry() {
	dir, _ := os.MkdirTemp("", "mcp-example")
	defer os.RemoveAll(dir)
	// A stdio server: here the example binary itself serves the test server.
	config := fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q, "env": {%q: "demo"}}}}`, os.Args[0], serverEnv)
	path := filepath.Join(dir, "mcp.json")
	_ = os.WriteFile(path, []byte(config), 0o600)

	servers, err := mcp.LoadConfig(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, _ := mcp.NewManager(mcp.ManagerConfig{})
	defer m.Shutdown(context.Background())
	if err := m.Add(servers...); err != nil {
		fmt.Println(err)
		return
	}
	r, _ := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})

	ctx := context.Background()
	tools, err := r.Tools(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range tools[:3] {
		fmt.Printf("%s: %s\n", t.Name, t.Description)
	}
	tool, _ := r.Tool(ctx, "echo")
	fmt.Println("echo schema:", string(tool.InputSchema))

	s := r.NewSession(mcp.Callbacks{})
	defer s.Close()
	res, err := s.CallTool(ctx, mcp.ToolCall{Name: "echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.IsError, res.Text())

	_, err = r.Tool(ctx, "eko")
	fmt.Println(err)
	// Output:
	// add_tool: Add a tool named by 'name'.
	// ask: Ask the user for a name and a count, then greet.
	// crash: Exit the server process in the middle of the call.
	// echo schema: {"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}
	// false hello
	// mcp: unknown tool "eko"; did you mean "echo"?
}

// A session with a progress callback around one call.
func ExampleSession_progress() {
	m, _ := mcp.NewManager(mcp.ManagerConfig{})
	defer m.Shutdown(context.Background())
	_ = m.Add(mcp.Server{Name: "demo", InProcess: testserver.New("demo").MCP})

	s := m.NewSession(mcp.Callbacks{
		Progress: func(_ context.Context, p mcp.Progress) {
			f, _ := p.Fraction()
			fmt.Printf("%s/%s %3.0f%% %s\n", p.Server, p.Tool, 100*f, p.Message)
		},
	})
	res, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "progress", Arguments: map[string]any{"steps": 2, "delay_ms": 5}})
	s.Close() // delivers what is pending, then stops the callbacks
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.IsError, res.Text())
	// Output:
	// demo/progress  50% step 1 of 2
	// demo/progress 100% step 2 of 2
	// false done 2 steps
}
