package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// beforeCrossingStore answers Runs as a store that stops before the run
// past RunQuery.MaxBytes, rather than returning it.
type beforeCrossingStore struct{ server.Store }

func (s beforeCrossingStore) Runs(ctx context.Context, q server.RunQuery) ([]*server.Run, error) {
	runs, err := s.Store.Runs(ctx, q)
	size := 0
	for i, r := range runs {
		if size += r.Size(); i > 0 && q.MaxBytes > 0 && size > q.MaxBytes {
			return runs[:i], err
		}
	}
	return runs, err
}

// TestRunListStoreStoppingBeforeBudget: a store that leaves off the run
// past the byte budget gives a page near the budget, which the run list
// answers as cut (X-Pagination-Next and X-Pagination-Truncated) so that
// a client pages on to the runs left.
func TestRunListStoreStoppingBeforeBudget(t *testing.T) {
	mem := server.NewMemoryStore()
	pad, _ := json.Marshal(map[string]string{"pad": strings.Repeat("x", 1000)})
	probe := &server.Run{ID: "r0", ThreadID: "00000000-0000-0000-0000-000000000000", AssistantID: "agent", Kwargs: pad}
	size := probe.Size() + 36 - len(probe.ThreadID) // a thread id is a UUID
	ts := newTestServer(t, server.Config{Store: beforeCrossingStore{mem}, MaxResponseBytes: 3*size + size/10})
	tid := newThread(t, ts.URL)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 5 {
		at := at.Add(time.Duration(i) * time.Second)
		if err := mem.CreateRun(t.Context(), &server.Run{ID: fmt.Sprintf("r%d", i), ThreadID: tid, AssistantID: "agent", Status: server.RunSuccess, Kwargs: pad, CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	_, h, b := call(t, "GET", ts.URL+"/threads/"+tid+"/runs?limit=10", nil)
	var runs []map[string]any
	if err := json.Unmarshal(b, &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 || h.Get("X-Pagination-Next") != "3" || h.Get(server.TruncatedHeader) != "true" {
		t.Errorf("%d runs, X-Pagination-Next %q, %s %q; want 3 runs, next 3, cut", len(runs), h.Get("X-Pagination-Next"), server.TruncatedHeader, h.Get(server.TruncatedHeader))
	}
}
