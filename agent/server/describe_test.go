package server_test

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// note is the state of the nested graph's subgraph "child".
type note struct {
	Text  string `json:"text"`
	Count int    `json:"count"`
}

// registerDescribed registers the graph "nested": prep, then the subgraph
// child (state note: one, then the subgraph deep, of state chat: two),
// with clients allowed to write messages only.
func registerDescribed(t *testing.T, srv *server.Server) {
	t.Helper()
	noop := func(context.Context, chat) (graph.Update[chat], error) { return graph.Update[chat]{}, nil }
	dg := graph.New[chat]()
	dg.AddNode("two", noop)
	dg.AddEdge(graph.START, "two").AddEdge("two", graph.END)
	deep, err := dg.Compile()
	if err != nil {
		t.Fatal(err)
	}
	cg := graph.New[note]()
	cg.AddNode("one", func(context.Context, note) (graph.Update[note], error) { return graph.Update[note]{}, nil })
	graph.AddSubgraph(cg, "deep", deep, func(note) chat { return chat{} }, func(chat) graph.Update[note] { return graph.Update[note]{} })
	cg.AddEdge(graph.START, "one").AddEdge("one", "deep").AddEdge("deep", graph.END)
	child, err := cg.Compile()
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[chat]()
	g.AddNode("prep", noop)
	graph.AddSubgraph(g, "child", child, func(chat) note { return note{} }, func(note) graph.Update[chat] { return graph.Update[chat]{} })
	g.AddEdge(graph.START, "prep").AddEdge("prep", "child").AddEdge("child", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "nested", app, server.WithInputFields[chat]("messages")); err != nil {
		t.Fatal(err)
	}
}

// TestOfficialJSClientDescribe: assistants.getGraph, getSchemas and
// getSubgraphs through the official JS client
// (testdata/js/describe.mjs).
func TestOfficialJSClientDescribe(t *testing.T) {
	modules := nodeModules(t)
	runScript(t, modules, "describe.mjs", newSDKServer(t), "test-key-0123456789")
}
