package mcp_test

import (
	"context"
	"os"
	"testing"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
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
