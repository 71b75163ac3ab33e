package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	cppg "github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// postgresConfig is a Config with the PostgreSQL store and checkpointer,
// on a fresh schema.
func postgresConfig(t *testing.T) server.Config {
	t.Helper()
	pool, schema := postgrestest.Schema(t, "agentserver_copy_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	saver, err := cppg.New(t.Context(), cppg.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	return server.Config{Store: st, Checkpointer: saver}
}

// backendConfigs are the store and checkpointer pairs the copy tests run
// on.
var backendConfigs = map[string]func(t *testing.T) server.Config{
	"memory":   func(*testing.T) server.Config { return server.Config{} },
	"sqlite":   sqliteConfig,
	"postgres": postgresConfig,
}

// threadCount answers POST /threads/count for h.
func threadCount(t *testing.T, url string, h http.Header) int {
	t.Helper()
	var n int
	if code := do(t, "POST", url+"/threads/count", map[string]any{}, h, &n); code != 200 {
		t.Fatalf("count: %d", code)
	}
	return n
}

// A thread pruned with keep_latest (its one checkpoint then holds the
// messages as a full value plus deltas) copies, on every backend, and the
// copy goes on.
func TestCopyAfterKeepLatest(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			url := serveChain(t, open(t))
			tid := chainThread(t, url)
			var out map[string]any
			body := map[string]any{"assistant_id": "chain", "input": map[string]any{"messages": []msg{{Type: "human", Content: "again"}}}}
			if code := do(t, "POST", url+"/threads/"+tid+"/runs/wait", body, nil, &out); code != 200 {
				t.Fatalf("second run: %d %v", code, out)
			}
			var res map[string]any
			if code := do(t, "POST", url+"/threads/prune", map[string]any{"thread_ids": []string{tid}, "strategy": "keep_latest"}, nil, &res); code != 200 || res["pruned_count"] != 1.0 {
				t.Fatalf("keep_latest: %d %v", code, res)
			}
			var cp map[string]any
			if code := do(t, "POST", url+"/threads/"+tid+"/copy", nil, nil, &cp); code != 200 {
				t.Fatalf("copy after keep_latest: %d %v; want 200", code, cp)
			}
			copyID, _ := cp["thread_id"].(string)
			if cp["status"] != "idle" {
				t.Errorf("copy's status %v; want idle", cp["status"])
			}
			var st struct {
				Values chat `json:"values"`
			}
			if code := do(t, "GET", url+"/threads/"+copyID+"/state", nil, nil, &st); code != 200 || len(st.Values.Messages) != 8 {
				t.Fatalf("copy's state: %d %+v; want 8 messages", code, st)
			}
			if code := do(t, "POST", url+"/threads/"+copyID+"/runs/wait", body, nil, &out); code != 200 || len(out["messages"].([]any)) != 12 {
				t.Fatalf("a run on the copy: %d %v; want 12 messages", code, out)
			}
		})
	}
}

// noCopier is a real Memory checkpointer seen without its Copier, so
// that CopyThread goes through Get and Put, which a pruned thread defeats.
type noCopier struct {
	checkpoint.Saver
	checkpoint.Pruner
}

// A copy checks Config.MaxThreads and Config.MaxCopyCheckpoints before it
// copies anything, and one that fails leaves no thread behind; none of
// these refusals is a 409.
func TestCopyLimitsAndFailure(t *testing.T) {
	mem := checkpoint.NewMemory()
	url := serveChain(t, server.Config{MaxThreads: 3, MaxCopyCheckpoints: 6, Checkpointer: noCopier{mem, mem}})
	tid := chainThread(t, url) // 5 checkpoints: input and 4 steps
	var e map[string]any
	body := map[string]any{"assistant_id": "chain", "input": map[string]any{"messages": []msg{{Type: "human", Content: "again"}}}}
	if code := do(t, "POST", url+"/threads/"+tid+"/runs/wait", body, nil, nil); code != 200 {
		t.Fatalf("second run: %d", code)
	}
	if code := do(t, "POST", url+"/threads/"+tid+"/copy", nil, nil, &e); code != 422 || !strings.Contains(fmt.Sprint(e["detail"]), "Config.MaxCopyCheckpoints") {
		t.Errorf("copy of a thread past MaxCopyCheckpoints: %d %v; want 422 naming Config.MaxCopyCheckpoints", code, e)
	}
	if n := threadCount(t, url, nil); n != 1 {
		t.Errorf("threads after a refused copy: %d; want 1", n)
	}
	if code := do(t, "POST", url+"/threads/prune", map[string]any{"thread_ids": []string{tid}, "strategy": "keep_latest"}, nil, nil); code != 200 {
		t.Fatalf("keep_latest: %d", code)
	}
	if code := do(t, "POST", url+"/threads/"+tid+"/copy", nil, nil, &e); code != http.StatusNotImplemented || !strings.Contains(fmt.Sprint(e["detail"]), "checkpoint.Copier") {
		t.Errorf("copy of a pruned thread by a checkpointer without Copier: %d %v; want 501 naming checkpoint.Copier", code, e)
	}
	if n := threadCount(t, url, nil); n != 1 {
		t.Errorf("threads after a failed copy: %d; want 1 (the copy deleted)", n)
	}
	other := chainThread(t, url)
	if code := do(t, "POST", url+"/threads", map[string]any{}, nil, nil); code != 200 {
		t.Fatalf("third thread: %d", code)
	}
	if code := do(t, "POST", url+"/threads/"+other+"/copy", nil, nil, &e); code != http.StatusTooManyRequests || !strings.Contains(fmt.Sprint(e["detail"]), "Config.MaxThreads") {
		t.Errorf("copy past MaxThreads: %d %v; want 429 naming Config.MaxThreads", code, e)
	}
	if n := threadCount(t, url, nil); n != 3 {
		t.Errorf("threads after a copy refused for MaxThreads: %d; want 3", n)
	}
}

// A thread paused inside a durable subgraph copies with the subgraph's
// thread: resuming the copy resumes the subgraph where it stopped, and
// the subgraph's nodes that finished do not run again.
func TestCopyDurableSubgraph(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			srv, err := server.New(open(t))
			if err != nil {
				t.Fatal(err)
			}
			var firstRuns atomic.Int32
			ig := graph.New[inner]()
			ig.AddNode("first", func(ctx context.Context, s inner) (graph.Update[inner], error) {
				firstRuns.Add(1)
				return innerSteps.Set([]string{"first"}), nil
			})
			ig.AddNode("ask", func(ctx context.Context, s inner) (graph.Update[inner], error) {
				answer, err := graph.Interrupt[string](ctx, "ok?")
				if err != nil {
					return graph.Update[inner]{}, err
				}
				return innerSteps.Set([]string{answer}), nil
			})
			ig.AddEdge(graph.START, "first").AddEdge("first", "ask").AddEdge("ask", graph.END)
			child, err := ig.Compile(graph.WithCheckpointer(srv.Checkpointer()))
			if err != nil {
				t.Fatal(err)
			}
			url := serveNested(t, srv, child)
			var th map[string]any
			if code := do(t, "POST", url+"/threads", map[string]any{}, nil, &th); code != 200 {
				t.Fatalf("create thread: %d", code)
			}
			tid := th["thread_id"].(string)
			var out map[string]any
			body := map[string]any{"assistant_id": "nested", "input": map[string]any{"messages": []msg{{Type: "human", Content: "go"}}}}
			if code := do(t, "POST", url+"/threads/"+tid+"/runs/wait", body, nil, &out); code != 200 || out["__interrupt__"] == nil {
				t.Fatalf("run: %d %v; want an interrupt", code, out)
			}
			var cp map[string]any
			if code := do(t, "POST", url+"/threads/"+tid+"/copy", nil, nil, &cp); code != 200 || cp["status"] != "interrupted" {
				t.Fatalf("copy: %d %v; want 200, interrupted", code, cp)
			}
			resume := map[string]any{"assistant_id": "nested", "command": map[string]any{"resume": "yes"}}
			if code := do(t, "POST", url+"/threads/"+cp["thread_id"].(string)+"/runs/wait", resume, nil, &out); code != 200 {
				t.Fatalf("resume the copy: %d %v", code, out)
			}
			msgs, _ := out["messages"].([]any)
			if len(msgs) != 2 || msgs[1].(map[string]any)["content"] != "first,yes" {
				t.Errorf("the copy's messages after resuming: %v; want the subgraph's first,yes", out["messages"])
			}
			if n := firstRuns.Load(); n != 1 {
				t.Errorf("the subgraph's first node ran %d times; want 1 (the copy resumes the subgraph where it stopped)", n)
			}
			// Deleting a thread deletes its durable subgraph's
			// checkpoint thread too.
			saver := srv.Checkpointer()
			for _, id := range []string{tid, cp["thread_id"].(string)} {
				var subs []string
				cps, err := saver.List(t.Context(), id, checkpoint.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cps {
					for _, task := range c.Next {
						if sub, err := saver.List(t.Context(), id+"|"+task.ID, checkpoint.ListOptions{Limit: 1}); err == nil && len(sub) > 0 {
							subs = append(subs, id+"|"+task.ID)
						}
					}
				}
				if len(subs) == 0 {
					t.Fatalf("thread %s: no subgraph checkpoint thread found", id)
				}
				if code := do(t, "DELETE", url+"/threads/"+id, nil, nil, nil); code != 204 && code != 200 {
					t.Fatalf("DELETE /threads/%s: %d", id, code)
				}
				for _, sub := range subs {
					if left, err := saver.List(t.Context(), sub, checkpoint.ListOptions{}); err != nil || len(left) > 0 {
						t.Errorf("after DELETE /threads/%s, its subgraph thread %s keeps %d checkpoints (%v)", id, sub, len(left), err)
					}
				}
			}
		})
	}
}

// POST /threads/prune with delete cancels the runs of every thread named
// before it waits for any: here the run of thread a stops only once the
// run of thread b was cancelled, which a prune that cancelled and waited
// for one thread at a time would never see. A thread with one checkpoint
// left is not counted by keep_latest.
func TestPruneCancelsAllFirst(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 2)
	bStopped := make(chan struct{})
	var aSawB atomic.Bool
	g := graph.New[chat]()
	g.AddNode("hold", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		name := s.Messages[len(s.Messages)-1].Content
		started <- name
		<-ctx.Done()
		switch name {
		case "b":
			close(bStopped)
		case "a":
			select {
			case <-bStopped:
				aSawB.Store(true)
			case <-time.After(10 * time.Second): // only when the prune is wrong
			}
		}
		return graph.Update[chat]{}, ctx.Err()
	})
	g.AddEdge(graph.START, "hold").AddEdge("hold", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "hold", app); err != nil {
		t.Fatal(err)
	}
	url := newHTTPServer(t, srv)
	var ids []string
	for _, name := range []string{"a", "b"} {
		var th map[string]any
		if code := do(t, "POST", url+"/threads", map[string]any{}, nil, &th); code != 200 {
			t.Fatalf("create thread: %d", code)
		}
		tid := th["thread_id"].(string)
		ids = append(ids, tid)
		if code := do(t, "POST", url+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "hold", "input": map[string]any{"messages": []msg{{Content: name}}}}, nil, nil); code != 200 {
			t.Fatalf("run on %s: %d", name, code)
		}
		if got := <-started; got != name {
			t.Fatalf("started %s; want %s", got, name)
		}
	}
	var res map[string]any
	if code := do(t, "POST", url+"/threads/prune", map[string]any{"thread_ids": ids, "strategy": "delete"}, nil, &res); code != 200 || res["pruned_count"] != 2.0 || res["failed"] != nil {
		t.Fatalf("prune of two busy threads: %d %v; want both pruned", code, res)
	}
	if !aSawB.Load() {
		t.Error("the run of a ended before the run of b was cancelled: prune cancelled one thread's runs and waited for them before cancelling the next")
	}
	chain := serveChain(t, server.Config{})
	tid := chainThread(t, chain)
	for i, want := range []float64{1, 0} {
		if code := do(t, "POST", chain+"/threads/prune", map[string]any{"thread_ids": []string{tid}, "strategy": "keep_latest"}, nil, &res); code != 200 || res["pruned_count"] != want {
			t.Errorf("keep_latest #%d: %d %v; want pruned_count %v", i+1, code, res, want)
		}
	}
}

// A run stored before a refusal was added (here feedback_keys and a
// configurable checkpoint_ns, now refused when a run is created) still
// executes: the refusals apply when a run is created, not to stored runs.
func TestStoredRunSkipsNewRefusals(t *testing.T) {
	st := server.NewMemoryStore()
	url := serveChain(t, server.Config{Store: st})
	var th map[string]any
	if code := do(t, "POST", url+"/threads", map[string]any{}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	tid := th["thread_id"].(string)
	kw := `{"assistant_id":"chain","input":{"messages":[{"type":"human","content":"go"}]},"feedback_keys":["score"],` +
		`"config":{"configurable":{"checkpoint_ns":"child:1","checkpoint_map":{"":"x"}}}}`
	var e map[string]any
	var body map[string]any
	if err := json.Unmarshal([]byte(kw), &body); err != nil {
		t.Fatal(err)
	}
	if code := do(t, "POST", url+"/threads/"+tid+"/runs", body, nil, &e); code != 422 {
		t.Fatalf("creating the run now: %d %v; want 422", code, e)
	}
	created := time.Now().Add(-time.Minute)
	run := &server.Run{ID: "01a00000-0000-7000-8000-000000000001", ThreadID: tid, AssistantID: "chain", CreatedAt: created, UpdatedAt: created,
		Status: server.RunPending, Metadata: map[string]any{}, Kwargs: json.RawMessage(kw), MultitaskStrategy: "enqueue", Owner: ""}
	if err := st.CreateRun(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	code := do(t, "GET", url+"/threads/"+tid+"/runs/"+run.ID+"/join", nil, nil, &out)
	if msgs, _ := out["messages"].([]any); code != 200 || len(msgs) != 4 {
		t.Fatalf("join the stored run: %d %v; want its 4 messages", code, out)
	}
	got, err := st.Run(t.Context(), run.ID)
	if err != nil || got.Status != server.RunSuccess {
		t.Fatalf("stored run: %+v, %v; want success", got, err)
	}
}

// A client cannot set the identity keys of a run's configurable: user_id
// and langgraph_auth_user_id are the authenticated principal, and
// langgraph_auth_user and langgraph_auth_permissions are dropped.
func TestConfigurableIdentityKeys(t *testing.T) {
	for _, auth := range []bool{true, false} {
		cfg := server.Config{}
		h := http.Header{}
		if auth {
			cfg.Authenticate = apiKeys(t, map[string]string{"ka-0123456789abcd": "alice"})
			h.Set("X-Api-Key", "ka-0123456789abcd")
		}
		srv, err := server.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		g := graph.New[chat]()
		g.AddNode("who", func(ctx context.Context, s chat) (graph.Update[chat], error) {
			rc := server.RunContext(ctx)
			return chatMessages.Set([]msg{{Type: "ai", Content: fmt.Sprint(rc["user_id"], " ", rc["langgraph_auth_user_id"], " ", rc["langgraph_auth_user"], " ", rc["langgraph_auth_permissions"], " ", rc["other"])}}), nil
		})
		g.AddEdge(graph.START, "who").AddEdge("who", graph.END)
		app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
		if err != nil {
			t.Fatal(err)
		}
		if err := server.Register(srv, "who", app); err != nil {
			t.Fatal(err)
		}
		url := newHTTPServer(t, srv)
		forged := map[string]any{"user_id": "mallory", "langgraph_auth_user_id": "mallory",
			"langgraph_auth_user": map[string]any{"identity": "mallory"}, "langgraph_auth_permissions": []string{"admin"}, "other": "kept"}
		// The keys are forged in config.configurable, then in the
		// request's context, which goes over the configurable.
		for _, where := range []string{"config", "context"} {
			var out map[string]any
			body := map[string]any{"assistant_id": "who", "input": map[string]any{"messages": []msg{{Type: "human", Content: "?"}}}}
			if where == "config" {
				body["config"] = map[string]any{"configurable": forged}
			} else {
				body["context"] = forged
			}
			if code := do(t, "POST", url+"/runs/wait", body, h, &out); code != 200 {
				t.Fatalf("auth %v, %s: run: %d %v", auth, where, code, out)
			}
			msgs, _ := out["messages"].([]any)
			want := "<nil> <nil> <nil> <nil> kept"
			if auth {
				want = "alice alice <nil> <nil> kept"
			}
			if len(msgs) != 2 || msgs[1].(map[string]any)["content"] != want {
				t.Errorf("auth %v, keys in %s: the node saw %v; want %q", auth, where, out["messages"], want)
			}
		}
	}
}
