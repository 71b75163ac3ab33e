package server_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// newSDKServer serves the graph "routed": ask (an interrupt whose
// answer becomes approved) then finish, and side and the task node note,
// which only a goto reaches; and the graph "nested" (registerDescribed).
func newSDKServer(t *testing.T) string {
	t.Helper()
	srv, err := server.New(server.Config{Authenticate: apiKeys(t, map[string]string{"test-key-0123456789": "tester"}), Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[chat]()
	g.AddNode("ask", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		answer, err := graph.Interrupt[string](ctx, "approve?")
		if err != nil {
			return graph.Update[chat]{}, err
		}
		return chatApproved.Set(answer), nil
	}, graph.Targets("side", "note"))
	g.AddNode("finish", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		return chatMessages.Set([]msg{{Type: "ai", Content: "final: " + s.Approved}}), nil
	})
	g.AddNode("side", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		return chatMessages.Set([]msg{{Type: "ai", Content: "side after: " + last(s)}}), nil
	})
	graph.AddTask(g, "note", func(_ context.Context, x string) (graph.Update[chat], error) {
		return chatMessages.Set([]msg{{Type: "ai", Content: "note: " + x}}), nil
	})
	g.AddEdge(graph.START, "ask").AddEdge("ask", "finish").AddEdge("finish", graph.END).
		AddEdge("side", graph.END).AddEdge("note", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "routed", app); err != nil {
		t.Fatal(err)
	}
	registerDescribed(t, srv)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return hs.URL
}

// TestOfficialJSClientCommand: command.update and command.goto through
// the official JS client (testdata/js/command.mjs).
func TestOfficialJSClientCommand(t *testing.T) {
	modules := nodeModules(t)
	runScript(t, modules, "command.mjs", newSDKServer(t), "test-key-0123456789")
}
