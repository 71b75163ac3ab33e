package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// runStarter is server.RunStarter's method, asserted by its signature.
type runStarter interface {
	StartRunEvent(ctx context.Context, runID, start, name string, data json.RawMessage, max int) (string, server.Event, error)
}

// runClaimer is server.RunClaimer's method, asserted by its signature.
type runClaimer interface {
	CreateRunClaimedLocked(ctx context.Context, threadID string, lease time.Duration, plan func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error)) (bool, error)
}

// runCounter is server.CountingClaimer's method, asserted by its
// signature.
type runCounter interface {
	CreateRunClaimedCountActive(ctx context.Context, threadID, owner string, lease time.Duration, plan func(*server.Thread, []*server.Run, int) (*server.Run, string, map[string]any, error)) (bool, error)
}

// BenchmarkStoreRunPath makes, per op, the Store calls of one run of a
// one-node graph as the server makes them with a server.LockingRecorder,
// without the server, the graph or the checkpoint saver: the count of
// the principal's active runs (Config.MaxActiveRuns; made by the
// creation's read with a CountingClaimer), the run's
// creation, claim (made by the creation with a RunClaimer), start with
// its metadata event (one call with a
// RunStarter, AppendEvent then StartRun without), values event and end.
// Each of clients goroutines runs its own thread's runs one after the
// other. It isolates what the run path costs PostgreSQL from what the
// server costs: measure PostgreSQL's CPU around it.
func BenchmarkStoreRunPath(b *testing.B) {
	for _, clients := range []int{1, 10} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			pool, schema := postgrestest.Schema(b, "agentserver_bench_")
			// As a server whose checkpoints share the database.
			st, err := postgres.New(b.Context(), postgres.Config{Pool: pool, Schema: schema, SharedCheckpoints: true})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ctx := b.Context()
			now := time.Now().UTC()
			for c := range clients {
				if err := st.CreateThread(ctx, &server.Thread{ID: fmt.Sprintf("t%d", c), Owner: "o", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now}); err != nil {
					b.Fatal(err)
				}
			}
			meta := json.RawMessage(`{"run_id":"r","thread_id":"t","attempt":1}`)
			vals := json.RawMessage(`{"name":"x","reply":"hi x"}`)
			b.ResetTimer()
			var wg sync.WaitGroup
			for c := range clients {
				n := b.N / clients
				if c < b.N%clients {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					tid := fmt.Sprintf("t%d", c)
					for i := range n {
						rid := fmt.Sprintf("%s-%d", tid, i)
						at := time.Now().UTC()
						run := &server.Run{ID: rid, ThreadID: tid, AssistantID: "trivial", CreatedAt: at, UpdatedAt: at, Status: server.RunPending,
							Kwargs: json.RawMessage(`{"assistant_id":"trivial"}`), MultitaskStrategy: "reject", Owner: "o"}
						plan := func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error) {
							return run, "trivial", map[string]any{"graph_id": "trivial"}, nil
						}
						if cc, ok := any(st).(runCounter); ok {
							run.Status, run.Worker, run.Attempt = server.RunRunning, "w", 1
							counted := func(t *server.Thread, active []*server.Run, _ int) (*server.Run, string, map[string]any, error) {
								return plan(t, active)
							}
							if _, err := cc.CreateRunClaimedCountActive(ctx, tid, "o", time.Minute, counted); err != nil {
								b.Error(err)
								return
							}
						} else if rc, ok := any(st).(runClaimer); ok {
							if _, err := st.CountActiveRuns(ctx, "o"); err != nil {
								b.Error(err)
								return
							}
							run.Status, run.Worker, run.Attempt = server.RunRunning, "w", 1
							if _, err := rc.CreateRunClaimedLocked(ctx, tid, time.Minute, plan); err != nil {
								b.Error(err)
								return
							}
						} else {
							if _, err := st.CreateRunLocked(ctx, tid, plan); err != nil {
								b.Error(err)
								return
							}
							if _, _, err := st.ClaimThreadLocked(ctx, tid, "w", time.Minute); err != nil {
								b.Error(err)
								return
							}
						}
						if rs, ok := any(st).(runStarter); ok {
							if _, _, err := rs.StartRunEvent(ctx, rid, "cp", "metadata", meta, 100); err != nil {
								b.Error(err)
								return
							}
						} else {
							if _, err := st.AppendEvent(ctx, rid, "metadata", meta, 100); err != nil {
								b.Error(err)
								return
							}
							if _, err := st.StartRun(ctx, rid, "cp"); err != nil {
								b.Error(err)
								return
							}
						}
						if _, err := st.AppendEvent(ctx, rid, "values", vals, 100); err != nil {
							b.Error(err)
							return
						}
						if _, _, err := st.FinishRunLocked(ctx, server.RunEnd{RunID: rid, ThreadID: tid,
							Refresh:   server.ThreadRefresh{State: true, Values: vals, Exclude: []string{rid}, At: time.Now().UTC()},
							EventName: "end", EventData: json.RawMessage(`{"run_id":"r","status":"success"}`), MaxEvents: 100,
							Status: server.RunSuccess, At: time.Now().UTC(), Worker: "w", Attempt: 1}); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}
