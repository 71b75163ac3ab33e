package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// eventCounter counts the events its store's Events calls return, and
// passes LastEvent on to its store.
type eventCounter struct {
	server.Store
	read atomic.Int64
}

func (c *eventCounter) Events(ctx context.Context, runID string, after int64, limit int) ([]server.Event, int64, error) {
	evs, first, err := c.Store.Events(ctx, runID, after, limit)
	c.read.Add(int64(len(evs)))
	return evs, first, err
}

func (c *eventCounter) LastEvent(ctx context.Context, runID, name string) (server.Event, bool, error) {
	return c.Store.(server.LastEventReader).LastEvent(ctx, runID, name)
}

// pagedStore is a store that is no LastEventReader.
type pagedStore struct{ server.Store }

// TestFailedRunErrorNameReadBounded: /join and /wait of a run that failed
// after a long stream name its error (NodeError) from the run's newest
// error event alone, on every store; they do not read the run's whole
// event log for it (here 500 events, up to Config.MaxRunEvents). A store
// that is no LastEventReader still has the name, from its log read page
// by page. Events appended after the run's end (as by an execution that
// lost the run's lease) do not hide the name.
func TestFailedRunErrorNameReadBounded(t *testing.T) {
	const emitted = 500
	configs := map[string]func(*testing.T) server.Config{"paged": func(*testing.T) server.Config {
		return server.Config{Store: pagedStore{server.NewMemoryStore()}, Checkpointer: checkpoint.NewMemory()}
	}}
	for name, open := range backendConfigs {
		configs[name] = open
	}
	for name, open := range configs {
		t.Run(name, func(t *testing.T) {
			cfg := open(t)
			if cfg.Store == nil {
				cfg.Store, cfg.Checkpointer = server.NewMemoryStore(), checkpoint.NewMemory()
			}
			_, paged := cfg.Store.(pagedStore)
			st := &eventCounter{Store: cfg.Store}
			cfg.Store = st
			if paged {
				cfg.Store = pagedStore{st}
			}
			srv, err := server.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			g := graph.New[chat]()
			g.AddNode("noisy", func(ctx context.Context, s chat) (graph.Update[chat], error) {
				for i := range emitted {
					if err := graph.Emit(ctx, map[string]int{"i": i}); err != nil {
						return graph.Update[chat]{}, err
					}
				}
				return graph.Update[chat]{}, errors.New("noisy failed")
			})
			g.AddEdge(graph.START, "noisy").AddEdge("noisy", graph.END)
			noisy, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
			if err != nil {
				t.Fatal(err)
			}
			if err := server.Register(srv, "noisy", noisy); err != nil {
				t.Fatal(err)
			}
			url := newHTTPServer(t, srv)
			tid := newThread(t, url)
			var run struct {
				RunID string `json:"run_id"`
			}
			in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
			if code := do(t, "POST", url+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "noisy", "input": in, "stream_mode": []string{"custom"}}, nil, &run); code != 200 {
				t.Fatalf("run: %d", code)
			}
			var got struct {
				Status string `json:"status"`
			}
			waitUntil(t, "the run to fail", func() bool {
				do(t, "GET", url+"/threads/"+tid+"/runs/"+run.RunID, nil, nil, &got)
				return got.Status == "error"
			})
			st.read.Store(0)
			var out struct {
				Error struct{ Error, Message string } `json:"__error__"`
			}
			if code := do(t, "GET", url+"/threads/"+tid+"/runs/"+run.RunID+"/join", nil, nil, &out); code != 200 || out.Error.Error != "NodeError" {
				t.Fatalf("join: %d %+v; want the error named NodeError", code, out.Error)
			}
			if n := st.read.Load(); n > 1 && !paged {
				t.Errorf("join of the failed run read %d events of its log (of %d and more) for its error's name; want at most its last", n, emitted)
			}
			// An execution that lost the run's lease appends after the
			// run's end: no store refuses it.
			for i := range 2 {
				if _, err := cfg.Store.AppendEvent(context.Background(), run.RunID, "custom", json.RawMessage(fmt.Sprintf(`{"late":%d}`, i)), 0); err != nil {
					t.Fatal(err)
				}
			}
			out.Error.Error = ""
			if code := do(t, "GET", url+"/threads/"+tid+"/runs/"+run.RunID+"/join", nil, nil, &out); code != 200 || out.Error.Error != "NodeError" {
				t.Fatalf("join after events appended past the run's end: %d %+v; want the error named NodeError", code, out.Error)
			}
		})
	}
}
