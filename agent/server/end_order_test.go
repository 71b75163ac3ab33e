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

// enderStore is a Store that records a run's end with its last event.
type enderStore interface {
	server.Store
	server.EventEnder
}

// endGate is a store that holds, until gate closes, any change of a run
// made after an end event was appended on its own (AppendEvent): the
// end's record, when the server appends the end event before it.
type endGate struct {
	enderStore
	armed atomic.Bool
	gate  chan struct{}
}

func (s *endGate) AppendEvent(ctx context.Context, runID, name string, data json.RawMessage, max int) (server.Event, error) {
	if name == "end" {
		s.armed.Store(true)
	}
	return s.enderStore.AppendEvent(ctx, runID, name, data, max)
}

func (s *endGate) UpdateRun(ctx context.Context, id string, fn func(*server.Run) error) (*server.Run, error) {
	if s.armed.Load() {
		select {
		case <-s.gate:
		case <-ctx.Done():
		case <-time.After(30 * time.Second): // bounds a broken test only
		}
	}
	return s.enderStore.UpdateRun(ctx, id, fn)
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
			gs := &endGate{enderStore: cfg.Store.(enderStore), gate: make(chan struct{})}
			defer close(gs.gate)
			cfg.Store = gs
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
