package server_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestStores checks the Store contract on every backend: ids, ownership
// fields, the claim queue and the bounded event log.
func TestStores(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) server.Store{
		"memory": func(t *testing.T) server.Store { return server.NewMemoryStore() },
		"sqlite": func(t *testing.T) server.Store {
			st, err := server.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	} {
		t.Run(name, func(t *testing.T) { testStore(t, open(t)) })
	}
}

func testStore(t *testing.T, st server.Store) {
	ctx := t.Context()
	now := time.Now().UTC()
	th := &server.Thread{ID: "t1", Owner: "alice", CreatedAt: now, UpdatedAt: now, Status: server.ThreadIdle, Metadata: map[string]any{"k": "v"}, GraphID: "g", Head: "cp"}
	if err := st.CreateThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateThread(ctx, th); !errors.Is(err, server.ErrExists) {
		t.Fatalf("second CreateThread: %v; want ErrExists", err)
	}
	got, err := st.Thread(ctx, "t1")
	if err != nil || got.Owner != "alice" || got.GraphID != "g" || got.Head != "cp" || got.Metadata["k"] != "v" {
		t.Fatalf("Thread: %+v, %v", got, err)
	}
	if _, err := st.UpdateThread(ctx, "t1", func(t *server.Thread) error { t.Status = server.ThreadBusy; return nil }); err != nil {
		t.Fatal(err)
	}
	found, total, err := st.SearchThreads(ctx, server.ThreadQuery{Owner: "alice", Status: server.ThreadBusy, Metadata: map[string]any{"k": "v"}, Limit: 10})
	if err != nil || total != 1 || len(found) != 1 {
		t.Fatalf("SearchThreads: %d %d %v", len(found), total, err)
	}
	if found, _, _ := st.SearchThreads(ctx, server.ThreadQuery{Owner: "bob", Limit: 10}); len(found) != 0 {
		t.Fatalf("bob finds %d threads", len(found))
	}
	for i, id := range []string{"r1", "r2"} {
		r := &server.Run{ID: id, ThreadID: "t1", CreatedAt: now.Add(-time.Second + time.Duration(i)*time.Millisecond), Status: server.RunPending, Kwargs: json.RawMessage(`{}`), Owner: "alice"}
		if err := st.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	c, err := st.Claim(ctx, "t1", "w1", time.Minute)
	if err != nil || c == nil || c.ID != "r1" || c.Status != server.RunRunning || c.Worker != "w1" {
		t.Fatalf("Claim: %+v, %v; want r1 running for w1", c, err)
	}
	if c, err := st.Claim(ctx, "t1", "w2", time.Minute); err != nil || c != nil {
		t.Fatalf("Claim while r1 runs: %+v, %v; want nothing", c, err)
	}
	if err := st.Renew(ctx, "r1", "w2", time.Minute); err == nil {
		t.Fatal("w2 renewed w1's lease")
	}
	// A lease that expired is taken over.
	if _, err := st.UpdateRun(ctx, "r1", func(r *server.Run) error { r.LeaseUntil = time.Now().Add(-time.Second); return nil }); err != nil {
		t.Fatal(err)
	}
	if c, err := st.Claim(ctx, "t1", "w2", time.Minute); err != nil || c == nil || c.ID != "r1" || c.Worker != "w2" {
		t.Fatalf("Claim after the lease expired: %+v, %v; want r1 for w2", c, err)
	}
	if _, err := st.UpdateRun(ctx, "r1", func(r *server.Run) error { r.Status = server.RunSuccess; return nil }); err != nil {
		t.Fatal(err)
	}
	if c, _ := st.Claim(ctx, "t1", "w1", time.Minute); c == nil || c.ID != "r2" {
		t.Fatalf("next claim: %+v; want r2", c)
	}
	for i := range 5 {
		ev, err := st.AppendEvent(ctx, "r2", "values", json.RawMessage(`{"i":`+string(rune('0'+i))+`}`), 3)
		if err != nil || ev.ID != int64(i) {
			t.Fatalf("AppendEvent %d: %+v, %v", i, ev, err)
		}
	}
	evs, first, err := st.Events(ctx, "r2", -1, 0)
	if err != nil || first != 2 || len(evs) != 3 || evs[0].ID != 2 || string(evs[2].Data) != `{"i":4}` {
		t.Fatalf("Events: %+v first %d, %v; want the last 3 of 5", evs, first, err)
	}
	if evs, _, _ := st.Events(ctx, "r2", 3, 1); len(evs) != 1 || evs[0].ID != 4 {
		t.Fatalf("Events after 3: %+v", evs)
	}
	if _, err := st.AppendEvent(ctx, "nope", "x", json.RawMessage(`1`), 3); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("AppendEvent to a missing run: %v", err)
	}
	runs, err := st.Runs(ctx, "t1", "")
	if err != nil || len(runs) != 2 || runs[0].ID != "r1" {
		t.Fatalf("Runs: %v, %v", runs, err)
	}
	if err := st.DeleteThread(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Run(ctx, "r2"); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("a deleted thread's run: %v", err)
	}
	if _, _, err := st.Events(ctx, "r2", -1, 0); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("a deleted thread's events: %v", err)
	}
}
