package postgres_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/checkpointtest"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
)

// BenchmarkPut measures one step of a chat-like thread: a Put and a Get of
// the thread's latest checkpoint (checkpointtest.BenchmarkPut), with the
// commit waiting for the disk and (async=true) not.
func BenchmarkPut(b *testing.B) {
	for _, async := range []bool{false, true} {
		b.Run(fmt.Sprintf("async=%t", async), func(b *testing.B) {
			s, m := benchSaver(b, postgres.Config{AsyncCommit: async})
			m.start()
			checkpointtest.BenchmarkPut(b, s)
			m.stop()
		})
	}
}

// BenchmarkGet measures a Get of a thread's latest checkpoint: two channels,
// one of them a full value followed by three deltas, and two pending
// writes.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	s, m := benchSaver(b, postgres.Config{})
	prev := ""
	for i := 1; i <= 4; i++ {
		kind := checkpoint.Delta
		if i == 1 {
			kind = checkpoint.Full
		}
		cp := &checkpoint.Checkpoint{ThreadID: "t", ParentID: prev, Step: i,
			Versions: map[string]uint64{"messages": uint64(i), "profile": 1}}
		blobs := []checkpoint.Blob{{Channel: "messages", Kind: kind, Data: []byte(`["a message of some length"]`)}}
		if i == 1 {
			blobs = append(blobs, checkpoint.Blob{Channel: "profile", Kind: checkpoint.Full, Data: []byte(`{"name":"Ada"}`)})
		}
		if err := s.Put(ctx, prev, cp, blobs, nil); err != nil {
			b.Fatal(err)
		}
		prev = cp.ID
	}
	if err := s.PutWrites(ctx, "t", prev, []checkpoint.Write{{TaskID: "a", Node: "n", Channel: "messages", Value: []byte(`"x"`)}, {TaskID: "b", Node: "m", Channel: "messages", Value: []byte(`"y"`)}}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	m.start()
	for b.Loop() {
		snap, err := s.Get(ctx, "t", "")
		if err != nil {
			b.Fatal(err)
		}
		if len(snap.Channels["messages"].Deltas) != 3 || len(snap.Writes) != 2 {
			b.Fatalf("Get = %+v; want 3 deltas and 2 writes", snap)
		}
	}
	m.stop()
}

// backendMeter measures the CPU time of the PostgreSQL backend serving a
// pool of one connection, from /proc/<pid>/schedstat, when the server runs
// on this machine, and that of this process. Unlike wall time, neither
// depends much on the machine's load.
type backendMeter struct {
	b          *testing.B
	pid        int
	begin, own int64
}

// benchSaver returns a Saver with cfg's options on a pool of one
// connection, on a fresh schema, and a meter of the backend serving it.
func benchSaver(b *testing.B, cfg postgres.Config) (*postgres.Saver, *backendMeter) {
	b.Helper()
	ctx := context.Background()
	schema := freshSchema(b, testPool(b))
	pc, err := pgxpool.ParseConfig(dsn())
	if err != nil {
		b.Fatal(err)
	}
	pc.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	cfg.Pool, cfg.Schema = pool, schema
	s, err := postgres.New(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	m := &backendMeter{b: b}
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&m.pid); err != nil {
		b.Fatal(err)
	}
	return s, m
}

// cpu returns the backend's CPU time so far in nanoseconds, or -1.
func (m *backendMeter) cpu() int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", m.pid))
	if err != nil {
		return -1
	}
	var ns int64
	if _, err := fmt.Sscan(string(raw), &ns); err != nil {
		return -1
	}
	return ns
}

func (m *backendMeter) start() { m.begin, m.own = m.cpu(), ownCPU() }

// stop reports the CPU time per operation since start of this process,
// as "go-ns/op", and of the backend, as "pg-ns/op".
func (m *backendMeter) stop() {
	if own := ownCPU(); m.own >= 0 && own >= 0 && m.b.N > 0 {
		m.b.ReportMetric(float64(own-m.own)/float64(m.b.N), "go-ns/op")
	}
	end := m.cpu()
	if m.begin < 0 || end < 0 || m.b.N == 0 {
		return
	}
	m.b.ReportMetric(float64(end-m.begin)/float64(m.b.N), "pg-ns/op")
}
