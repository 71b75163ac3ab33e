package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// BenchmarkCallTool compares one echo call through the manager, a session
// and the resilience policy with the same call on a bare mcp-go client.
func BenchmarkCallTool(b *testing.B) {
	ctx := context.Background()
	args := map[string]any{"text": "hi"}
	direct := func(b *testing.B, c *client.Client, token bool) {
		b.Helper()
		var init mcpgo.InitializeRequest
		init.Params.ProtocolVersion = mcp.ProtocolLegacy
		init.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "1"}
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Initialize(ctx, init); err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		var req mcpgo.CallToolRequest
		req.Params.Name = "echo"
		req.Params.Arguments = args
		if token {
			req.Params.Meta = &mcpgo.Meta{ProgressToken: "bench-token"}
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := c.CallTool(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	}
	managed := func(b *testing.B, srv mcp.Server, cb mcp.Callbacks) {
		b.Helper()
		m, _ := mcp.NewManager(mcp.ManagerConfig{})
		defer m.Shutdown(ctx)
		if err := m.Add(srv); err != nil {
			b.Fatal(err)
		}
		s := m.NewSession(cb)
		defer s.Close()
		call := mcp.ToolCall{Server: srv.Name, Name: "echo", Arguments: args}
		if _, err := s.CallTool(ctx, call); err != nil { // connect outside the loop
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := s.CallTool(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("inprocess/mcp-go", func(b *testing.B) {
		c, _ := client.NewInProcessClient(testserver.New("bench").MCP)
		direct(b, c, false)
	})
	// The same call carrying a progress token, as every call of a session
	// with a progress callback does.
	b.Run("inprocess/mcp-go+token", func(b *testing.B) {
		c, _ := client.NewInProcessClient(testserver.New("bench").MCP)
		direct(b, c, true)
	})
	progress := mcp.Callbacks{Progress: func(_ context.Context, _ mcp.Progress) {}}
	b.Run("inprocess/manager", func(b *testing.B) {
		managed(b, mcp.Server{Name: "bench", InProcess: testserver.New("bench").MCP}, mcp.Callbacks{})
	})
	// With a progress callback every call carries a progress token, which
	// mcp-go encodes and the server decodes.
	b.Run("inprocess/manager+progress", func(b *testing.B) {
		managed(b, mcp.Server{Name: "bench", InProcess: testserver.New("bench").MCP}, progress)
	})
	b.Run("stdio/mcp-go", func(b *testing.B) {
		c := client.NewClient(transport.NewStdio(os.Args[0], []string{serverEnv + "=bench"}),
			client.WithProtocolVersion(mcp.ProtocolLegacy))
		direct(b, c, false)
	})
	b.Run("stdio/manager", func(b *testing.B) {
		managed(b, stdioServer("bench"), mcp.Callbacks{})
	})
	b.Run("stdio/manager+progress", func(b *testing.B) {
		managed(b, stdioServer("bench"), progress)
	})
}

// BenchmarkRegistryRefreshTools refreshes a registry over a server of 20
// tools, each with an input and an output schema, and looks up every
// tool's definition (refresh+lookups): what an agent does each TTL to
// offer the tools.
func BenchmarkRegistryRefreshTools(b *testing.B) {
	ctx := context.Background()
	srv := server.NewMCPServer("many", "1.0.0")
	var names []string
	for i := range 20 {
		name := fmt.Sprintf("tool_%d", i)
		names = append(names, name)
		srv.AddTool(mcpgo.NewTool(name, mcpgo.WithDescription("a tool"),
			mcpgo.WithString("query", mcpgo.Required(), mcpgo.Description("what to look for")),
			mcpgo.WithNumber("limit", mcpgo.Description("how many")),
			mcpgo.WithReadOnlyHintAnnotation(true),
			mcpgo.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{"hits":{"type":"array","items":{"type":"string"}}}}`))),
			func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				return mcpgo.NewToolResultText("ok"), nil
			})
	}
	m, _ := mcp.NewManager(mcp.ManagerConfig{})
	defer m.Shutdown(ctx)
	if err := m.Add(mcp.Server{Name: "many", InProcess: srv}); err != nil {
		b.Fatal(err)
	}
	r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Refresh(ctx); err != nil { // connect outside the loop
		b.Fatal(err)
	}
	run := func(lookups []string) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := r.Refresh(ctx); err != nil {
					b.Fatal(err)
				}
				for _, n := range lookups {
					if _, err := r.Tool(ctx, n); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
	b.Run("refresh", run(nil))
	b.Run("refresh+lookups", run(names))
}
