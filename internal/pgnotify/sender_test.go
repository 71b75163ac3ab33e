package pgnotify

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestSenderBatchesAndDeduplicates sends payloads while the pool's only
// connection is held: a listener receives every payload, and they took
// at most two statements (the first send may have started with the
// first payload alone).
func TestSenderBatchesAndDeduplicates(t *testing.T) {
	postgrestest.Schema(t, "pgnotify_") // skips when no PostgreSQL answers
	// The probe below is counted apart: the others are the Sender's.
	tr := postgrestest.Counter{Apart: func(sql string) bool { return strings.Contains(sql, "'probe'") }}
	p := postgrestest.TracedPool(t, &tr, func(cfg *pgxpool.Config) { cfg.MaxConns = 1 })
	listener, err := pgx.Connect(t.Context(), postgrestest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(context.Background())
	channel := "sender_test_" + strings.ReplaceAll(t.Name(), "/", "_")
	if _, err := listener.Exec(t.Context(), "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	s := NewSender(p, channel, nil)
	held, err := p.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, payload := range []string{"a", "b", "a", "c", "b", "d"} {
		s.Send(payload)
	}
	held.Release()
	if err := s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	// A probe sent now comes after every payload the sender sent.
	if _, err := p.Exec(t.Context(), "SELECT pg_notify($1, 'probe')", channel); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
		n, err := listener.WaitForNotification(ctx)
		cancel()
		if err != nil {
			t.Fatalf("after %v: %v", seen, err)
		}
		if n.Payload == "probe" {
			break
		}
		seen[n.Payload]++
	}
	var got []string
	for k, n := range seen {
		got = append(got, k)
		// Deduplicated within a send; the first send may have taken a
		// payload that came again after it.
		if n > 2 {
			t.Errorf("%q received %d times; want at most once per send", k, n)
		}
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "a,b,c,d" {
		t.Fatalf("received %v; want a, b, c and d", got)
	}
	if k := tr.Snapshot().Statements; k > 2 {
		t.Fatalf("%d statements sent the payloads; want at most 2", k)
	}
}

// sendAgain queues a new payload on s each time one of s's statements
// starts, until stop: a steady traffic that never leaves s idle.
type sendAgain struct {
	s    atomic.Pointer[Sender]
	n    atomic.Int64
	stop atomic.Bool
}

func (a *sendAgain) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if s := a.s.Load(); s != nil && strings.Contains(d.SQL, "pg_notify") && !a.stop.Load() {
		s.Send(fmt.Sprintf("again%d", a.n.Add(1)))
	}
	return ctx
}

func (a *sendAgain) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestSenderWaitUnderSteadyTraffic checks that Wait returns once the
// payloads queued before it are sent, although every send finds a new
// payload queued (the sender is never idle).
func TestSenderWaitUnderSteadyTraffic(t *testing.T) {
	postgrestest.Schema(t, "pgnotify_") // skips when no PostgreSQL answers
	cfg, err := pgxpool.ParseConfig(postgrestest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	var tr sendAgain
	cfg.ConnConfig.Tracer = &tr
	p, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	s := NewSender(p, "sender_test_steady", nil)
	tr.s.Store(s)
	defer func() {
		tr.stop.Store(true)
		_ = s.Wait(context.Background())
	}()
	s.Send("first")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	if err := s.Wait(ctx); err != nil {
		t.Fatalf("Wait under steady traffic: %v after %d later sends; want it to return once the first is sent", err, tr.n.Load())
	}
	if tr.n.Load() == 0 {
		t.Fatal("no payload was queued during the send; the test tests nothing")
	}
}
