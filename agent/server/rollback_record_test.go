package server_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
)

// deletedAt notes, each time a run is deleted, the status its thread's
// record had at that moment.
type deletedAt struct {
	mu sync.Mutex
	at map[string]string // run id -> its thread's status when it was deleted
}

// deleteRun deletes run id from st, noting its thread's status then.
func (d *deletedAt) deleteRun(ctx context.Context, st server.Store, id string) error {
	r, rerr := st.Run(ctx, id)
	err := st.DeleteRun(ctx, id)
	if rerr == nil && err == nil {
		if t, err := st.Thread(ctx, r.ThreadID); err == nil {
			d.mu.Lock()
			if d.at == nil {
				d.at = map[string]string{}
			}
			d.at[id] = t.Status
			d.mu.Unlock()
		}
	}
	return err
}

func (d *deletedAt) statusAt(id string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.at[id]
}

// The stores with their DeleteRun watched. Each embeds its store's
// concrete type, so that the server finds the same optional interfaces
// (RunRecorder, LockingRecorder, ThreadLocker...) as on the store itself
// and takes the same paths.
type (
	memDeletes struct {
		*server.MemoryStore
		*deletedAt
	}
	sqliteDeletes struct {
		*server.SQLiteStore
		*deletedAt
	}
	pgDeletes struct {
		*postgres.Store
		*deletedAt
	}
)

func (s memDeletes) DeleteRun(ctx context.Context, id string) error {
	return s.deleteRun(ctx, s.MemoryStore, id)
}

func (s sqliteDeletes) DeleteRun(ctx context.Context, id string) error {
	return s.deleteRun(ctx, s.SQLiteStore, id)
}

func (s pgDeletes) DeleteRun(ctx context.Context, id string) error {
	return s.deleteRun(ctx, s.Store, id)
}

// watchDeletes returns cfg with its store's DeleteRun watched by d.
func watchDeletes(t *testing.T, cfg server.Config, d *deletedAt) server.Config {
	t.Helper()
	switch st := cfg.Store.(type) {
	case nil:
		cfg.Store = memDeletes{server.NewMemoryStore(), d}
	case *server.SQLiteStore:
		cfg.Store = sqliteDeletes{st, d}
	case *postgres.Store:
		cfg.Store = pgDeletes{st, d}
	default:
		t.Fatalf("no DeleteRun watch for a %T", st)
	}
	return cfg
}

// TestRollbackRecordsThreadFirst: a rollback, of a running run or of a
// pending one, brings its thread's record back before it deletes the
// run, as a run's end records the thread's status before the run's, so
// that a client that finds the run gone (a cancel with wait, a list of
// the thread's runs) never reads the thread still busy with it (issue
// #21), on every store: the stores' own paths (a LockingRecorder's one
// transaction, a ThreadLocker's lock) are those the rollback takes.
func TestRollbackRecordsThreadFirst(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			d := &deletedAt{}
			ts := newTestServer(t, watchDeletes(t, open(t), d))
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
			runs := ts.URL + "/threads/" + th.ThreadID + "/runs"
			in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
			var running, pending struct {
				RunID string `json:"run_id"`
			}
			if code := do(t, "POST", runs, map[string]any{"assistant_id": "slow", "input": in}, nil, &running); code != 200 {
				t.Fatalf("run: %d", code)
			}
			waitUntil(t, "the run to wait in its node", func() bool { return ts.gates.waiting(th.ThreadID) })
			if code := do(t, "POST", runs+"/"+running.RunID+"/cancel?action=rollback&wait=1", nil, nil, nil); code != http.StatusNoContent {
				t.Fatalf("rollback of the running run: %d", code)
			}
			if got := d.statusAt(running.RunID); got != "idle" {
				t.Errorf("thread status when the running run was deleted: %q; want idle", got)
			}
			if code := do(t, "POST", runs, map[string]any{"assistant_id": "slow", "input": in, "after_seconds": 3600}, nil, &pending); code != 200 {
				t.Fatalf("delayed run: %d", code)
			}
			if code := do(t, "POST", runs+"/"+pending.RunID+"/cancel?action=rollback&wait=1", nil, nil, nil); code != http.StatusNoContent {
				t.Fatalf("rollback of the pending run: %d", code)
			}
			if got := d.statusAt(pending.RunID); got != "idle" {
				t.Errorf("thread status when the pending run was deleted: %q; want idle", got)
			}
			var thread struct {
				Status string `json:"status"`
			}
			if do(t, "GET", ts.URL+"/threads/"+th.ThreadID, nil, nil, &thread); thread.Status != "idle" {
				t.Errorf("thread status after the rollbacks: %s; want idle", thread.Status)
			}
		})
	}
}
