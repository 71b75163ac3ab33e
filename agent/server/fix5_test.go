package server_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// flakyStore fails the next read of one run's events (Events) or of the
// run itself (Run), once armed.
type flakyStore struct {
	server.Store
	mu     sync.Mutex
	run    string // the run whose next read fails
	events bool   // Events fails, else Run
	failed chan struct{}
}

var errFlaky = errors.New("flaky store: read failed")

func (f *flakyStore) arm(runID string, events bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.run, f.events = runID, events
}

func (f *flakyStore) fail(runID string, events bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.run == "" || f.run != runID || f.events != events {
		return false
	}
	f.run = ""
	close(f.failed)
	return true
}

func (f *flakyStore) Events(ctx context.Context, runID string, after int64, limit int) ([]server.Event, int64, error) {
	if f.fail(runID, true) {
		return nil, 0, errFlaky
	}
	return f.Store.Events(ctx, runID, after, limit)
}

func (f *flakyStore) Run(ctx context.Context, runID string) (*server.Run, error) {
	if f.fail(runID, false) {
		return nil, errFlaky
	}
	return f.Store.Run(ctx, runID)
}

// TestStatelessStreamStoreErrorKeepsRun: a stateless /runs/stream whose
// stream stops because a read of the store failed (of the run's events,
// or of the run) leaves its run as it was: its client is still there,
// and only a client that leaves cancels the run. The run was interrupted
// (the stream's end was taken for the client's departure). It waits
// (after_seconds) so that the stream polls the store; the poll's read
// fails.
func TestStatelessStreamStoreErrorKeepsRun(t *testing.T) {
	for _, events := range []bool{true, false} {
		name := "Run"
		if events {
			name = "Events"
		}
		t.Run(name, func(t *testing.T) {
			st := &flakyStore{Store: server.NewMemoryStore(), failed: make(chan struct{})}
			s := newTestServer(t, server.Config{Store: st, Heartbeat: 10 * time.Millisecond})
			body := `{"assistant_id":"slow","input":{"messages":[{"role":"user","content":"x"}]},"after_seconds":3600}`
			resp, err := http.Post(s.URL+"/runs/stream", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("POST /runs/stream: %d", resp.StatusCode)
			}
			loc := resp.Header.Get("Content-Location")
			rid := loc[strings.LastIndex(loc, "/")+1:]
			st.arm(rid, events)
			evs := readSSE(t, resp.Body) // to the stream's end
			<-st.failed
			if (len(evs) == 0 || evs[len(evs)-1].Name != "error") {
				t.Errorf("stream: %v, want it to end with an error event", evs)
			}
			run, err := st.Store.Run(context.Background(), rid)
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != server.RunPending {
				t.Errorf("run status %q after the stream's store error, want pending", run.Status)
			}
		})
	}
}
