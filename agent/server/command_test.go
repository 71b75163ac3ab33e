package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

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
	if err := server.Register(srv, "routed", app, server.WithGoto[chat](server.GotoPolicy{Nodes: []string{"side", "note"}})); err != nil {
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

// registerGated registers the graph "gated" on ts: node b, which waits
// for the thread's gate of ts, reached only by a goto.
func registerGated(t *testing.T, ts *testServer) {
	t.Helper()
	g := graph.New[chat]()
	g.AddNode("a", func(context.Context, chat) (graph.Update[chat], error) { return graph.Update[chat]{}, nil }, graph.Targets("b"))
	g.AddNode("b", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		if err := ts.gates.wait(ctx, graph.ConfigFrom(ctx).ThreadID); err != nil {
			return graph.Update[chat]{}, err
		}
		return chatMessages.Set([]msg{{Type: "ai", Content: "b after: " + last(s)}}), nil
	})
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END).AddEdge("b", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(ts.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(ts.Server, "gated", app, server.WithGoto[chat](server.GotoPolicy{Nodes: []string{"b"}})); err != nil {
		t.Fatal(err)
	}
}

// TestTakeoverAfterCommandUpdate: a run whose command.update and goto
// were saved before the instance running it stalled is taken over from
// that checkpoint, and the update is not applied a second time: on a
// new thread (the update is its first checkpoint, which the run resumes
// from) and on a thread with checkpoints (the update's parent is the
// run's start, which the run starts again from).
func TestTakeoverAfterCommandUpdate(t *testing.T) {
	for _, before := range []bool{false, true} {
		t.Run(map[bool]string{false: "new thread", true: "thread with a run"}[before], func(t *testing.T) {
			mem := server.NewMemoryStore()
			ts1 := newTestServer(t, server.Config{Store: renewFlake{mem}, Worker: "w1", Lease: 300 * time.Millisecond, SweepInterval: time.Hour})
			registerGated(t, ts1)
			tid := newThread(t, ts1.URL)
			want := []string{"u", "b after: u"}
			if before {
				if code := do(t, "POST", ts1.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "gated", "input": humanInput("hi")}, nil, nil); code != 200 {
					t.Fatalf("first run: %d", code)
				}
				want = append([]string{"hi"}, want...)
			}
			rid := startRun(t, ts1.URL, tid, map[string]any{"assistant_id": "gated", "command": map[string]any{"update": humanInput("u"), "goto": "b"}}, "run")
			waitUntil(t, "the run to wait in b on the first instance", func() bool { return ts1.gates.waiting(tid) })
			ts2 := takeoverServer(t, mem, ts1.Checkpointer())
			registerGated(t, ts2)
			ts2.gates.release(tid)
			if status := waitRunEnd(t, ts2.URL, tid, rid, "the run taken over to end"); status != "success" {
				t.Fatalf("run taken over ended %s; want success", status)
			}
			var state struct {
				Values chat `json:"values"`
			}
			do(t, "GET", ts2.URL+"/threads/"+tid+"/state", nil, nil, &state)
			var got []string
			for _, m := range state.Values.Messages {
				got = append(got, m.Content)
			}
			if !slices.Equal(got, want) {
				t.Errorf("messages after the run taken over: %q; want %q (the update once)", got, want)
			}
			ts1.gates.release(tid)
		})
	}
}

// TestGotoOptIn: command.goto is refused on a graph registered without
// WithGoto, to a node WithGoto does not list (a task node's Send too),
// and with more items than its MaxSends, each with 422 before a run is
// made; a listed node runs.
func TestGotoOptIn(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	build := func() *graph.Compiled[chat] {
		g := graph.New[chat]()
		g.AddNode("a", func(context.Context, chat) (graph.Update[chat], error) { return graph.Update[chat]{}, nil }, graph.Targets("safe", "tool"))
		g.AddNode("safe", func(_ context.Context, s chat) (graph.Update[chat], error) {
			return chatMessages.Set([]msg{{Type: "ai", Content: "safe ran"}}), nil
		})
		graph.AddTask(g, "tool", func(_ context.Context, x string) (graph.Update[chat], error) {
			return chatMessages.Set([]msg{{Type: "ai", Content: "tool: " + x}}), nil
		})
		g.AddEdge(graph.START, "a").AddEdge("a", graph.END).AddEdge("safe", graph.END).AddEdge("tool", graph.END)
		app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
		if err != nil {
			t.Fatal(err)
		}
		return app
	}
	if err := server.Register(srv, "closed", build()); err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "open", build(), server.WithGoto[chat](server.GotoPolicy{Nodes: []string{"safe"}, MaxSends: 2})); err != nil {
		t.Fatal(err)
	}
	for _, p := range []server.GotoPolicy{{}, {Nodes: []string{"ghost"}}, {Nodes: []string{"safe"}, MaxSends: -1}} {
		if err := server.Register(srv, "bad", build(), server.WithGoto[chat](p)); err == nil {
			t.Errorf("Register with WithGoto(%+v): no error", p)
		}
	}
	url := newHTTPServer(t, srv)
	for _, c := range []struct {
		graph string
		goTo  any
		want  string
	}{
		{"closed", "safe", "takes no goto"},
		{"closed", map[string]any{"node": "tool", "input": "rm -rf"}, "takes no goto"},
		{"open", "a", "is not one clients may goto; give one of safe"},
		{"open", map[string]any{"node": "tool", "input": "rm -rf"}, "command.goto.node: node \\\"tool\\\" of graph"},
		{"open", []string{"safe", "safe", "safe"}, "has 3 items, more than the 2"},
	} {
		tid := newThread(t, url)
		b, err := json.Marshal(map[string]any{"assistant_id": c.graph, "command": map[string]any{"goto": c.goTo}})
		if err != nil {
			t.Fatal(err)
		}
		code, body := raw(t, "POST", url+"/threads/"+tid+"/runs/wait", string(b), nil)
		if code != 422 || !strings.Contains(body, c.want) {
			t.Errorf("%s goto %v: %d %s; want 422 saying %q", c.graph, c.goTo, code, body, c.want)
		}
		if n := len(historyIDs(t, url, tid, nil)); n != 0 {
			t.Errorf("%s goto %v: the thread has %d checkpoints, want none", c.graph, c.goTo, n)
		}
	}
	tid := newThread(t, url)
	var v map[string]any
	if code := do(t, "POST", url+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "open", "command": map[string]any{"goto": "safe"}}, nil, &v); code != 200 || !strings.Contains(fmt.Sprint(v), "safe ran") {
		t.Errorf("goto a listed node: %d %v; want 200 and safe's message", code, v)
	}
}

// TestCommandResumeCheckedBeforeUpdate: a command whose resume cannot
// answer the thread's interrupts (one value for two) is refused before
// its update is saved: the thread keeps its checkpoints, and a retry
// does not find the update there to apply twice.
func TestCommandResumeCheckedBeforeUpdate(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(ctx context.Context, s chat) (graph.Update[chat], error) {
		answer, err := graph.Interrupt[string](ctx, "approve?")
		if err != nil {
			return graph.Update[chat]{}, err
		}
		return chatApproved.Set(answer), nil
	}
	g := graph.New[chat]()
	g.AddNode("x", ask)
	g.AddNode("y", ask)
	g.AddEdge(graph.START, "x").AddEdge(graph.START, "y").AddEdge("x", graph.END).AddEdge("y", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "two", app); err != nil {
		t.Fatal(err)
	}
	url := newHTTPServer(t, srv)
	tid := newThread(t, url)
	if code := do(t, "POST", url+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "two", "input": humanInput("hi")}, nil, nil); code != 200 {
		t.Fatalf("first run: %d", code)
	}
	before := historyIDs(t, url, tid, nil)
	for range 2 {
		b, err := json.Marshal(map[string]any{"assistant_id": "two", "command": map[string]any{"update": humanInput("edit"), "resume": "yes"}})
		if err != nil {
			t.Fatal(err)
		}
		_, body := raw(t, "POST", url+"/threads/"+tid+"/runs/wait", string(b), nil)
		if !strings.Contains(body, "exactly one pending interrupt") {
			t.Errorf("command {update, resume: one value} on two interrupts: %s; want the resume refused", body)
		}
	}
	if after := historyIDs(t, url, tid, nil); !slices.Equal(after, before) {
		t.Errorf("checkpoints after the refused commands: %v, want %v (the update must not be saved)", after, before)
	}
}
