package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// endGate holds, until ch closes, any change of a run made after an end
// event was appended on its own (AppendEvent): the end's record, when
// the server appends the end event before it.
type endGate struct {
	armed atomic.Bool
	ch    chan struct{}
}

// appending arms g when name is the end event.
func (g *endGate) appending(name string) {
	if name == "end" {
		g.armed.Store(true)
	}
}

// hold waits, once g is armed, until ch closes (or ctx ends).
func (g *endGate) hold(ctx context.Context) {
	if g.armed.Load() {
		select {
		case <-g.ch:
		case <-ctx.Done():
		case <-time.After(30 * time.Second): // bounds a broken test only
		}
	}
}

// memoryGate and sqliteGate are the stores with their AppendEvent and
// UpdateRun (the step-by-step end's record) going through an endGate, and
// every other method, those of the optional interfaces included
// (AttemptRenewer, ActiveRunLister, EventEnder), the store's own: the
// server takes the paths it takes with the store itself.
type (
	memoryGate struct {
		*server.MemoryStore
		g *endGate
	}
	sqliteGate struct {
		*server.SQLiteStore
		g *endGate
	}
)

var (
	_ server.AttemptRenewer  = memoryGate{}
	_ server.ActiveRunLister = memoryGate{}
	_ server.EventEnder      = memoryGate{}
	_ server.AttemptRenewer  = sqliteGate{}
	_ server.EventEnder      = sqliteGate{}
)

func (s memoryGate) AppendEvent(ctx context.Context, runID, name string, data json.RawMessage, max int) (server.Event, error) {
	s.g.appending(name)
	return s.MemoryStore.AppendEvent(ctx, runID, name, data, max)
}

func (s memoryGate) UpdateRun(ctx context.Context, id string, fn func(*server.Run) error) (*server.Run, error) {
	s.g.hold(ctx)
	return s.MemoryStore.UpdateRun(ctx, id, fn)
}

func (s sqliteGate) AppendEvent(ctx context.Context, runID, name string, data json.RawMessage, max int) (server.Event, error) {
	s.g.appending(name)
	return s.SQLiteStore.AppendEvent(ctx, runID, name, data, max)
}

func (s sqliteGate) UpdateRun(ctx context.Context, id string, fn func(*server.Run) error) (*server.Run, error) {
	s.g.hold(ctx)
	return s.SQLiteStore.UpdateRun(ctx, id, fn)
}

// TestEndEventAfterEnd: a client that receives a run's end event and
// then reads the run finds it ended, on the stores that record a run's
// end step by step (memory, SQLite): the end is recorded with its event,
// not after it.
func TestEndEventAfterEnd(t *testing.T) {
	stores := map[string]func(t *testing.T) server.Config{
		"memory": func(*testing.T) server.Config { return server.Config{Store: server.NewMemoryStore()} },
		"sqlite": sqliteConfig,
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			cfg := open(t)
			g := &endGate{ch: make(chan struct{})}
			defer close(g.ch)
			switch st := cfg.Store.(type) {
			case *server.MemoryStore:
				cfg.Store = memoryGate{st, g}
			case *server.SQLiteStore:
				cfg.Store = sqliteGate{st, g}
			default:
				t.Fatalf("store %T: no gate for it", st)
			}
			ts := newTestServer(t, cfg)
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
			body := `{"assistant_id": "agent", "input": {"messages": [{"type": "human", "content": "hi"}]}}`
			resp, err := http.Post(ts.URL+"/threads/"+th.ThreadID+"/runs/stream", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			evs := readSSE(t, resp.Body)
			resp.Body.Close()
			var meta struct {
				RunID string `json:"run_id"`
			}
			if len(evs) == 0 || evs[len(evs)-1].Name != "end" || json.Unmarshal(evs[0].Data, &meta) != nil {
				t.Fatalf("stream: %v; want a metadata event first and an end event last", evs)
			}
			var run server.Run
			if code := do(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/runs/"+meta.RunID, nil, nil, &run); code != 200 {
				t.Fatalf("GET run: %d", code)
			}
			if run.Status != server.RunSuccess {
				t.Errorf("run read after its end event: status %q; want %q", run.Status, server.RunSuccess)
			}
		})
	}
}
