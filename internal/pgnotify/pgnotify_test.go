package pgnotify

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pool opens a pool whose AfterConnect hook counts its calls.
func pool(t *testing.T, hooked *atomic.Int64) *pgxpool.Pool {
	t.Helper()
	postgrestest.Schema(t, "pgnotify_") // skips when no PostgreSQL answers
	cfg, err := pgxpool.ParseConfig(postgrestest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.AfterConnect = func(context.Context, *pgx.Conn) error { hooked.Add(1); return nil }
	p, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func waitListening(t *testing.T, h *Hub) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // failure guard only
	for !h.Listening() {
		if time.Now().After(deadline) {
			t.Fatal("the hub never listened")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSubscribersReuseOneListener: waiters that come and go one after
// another, each alone, share one listener connection, made by the pool
// (its AfterConnect hook ran), which still delivers notifications.
func TestSubscribersReuseOneListener(t *testing.T) {
	var hooked atomic.Int64
	p := pool(t, &hooked)
	h := New(p, "pgnotify_test_reuse", nil)
	defer h.Close()
	for i := range 5 {
		wake, cancel := h.Subscribe("tag")
		waitListening(t, h)
		if i == 4 {
			if _, err := p.Exec(t.Context(), "SELECT pg_notify('pgnotify_test_reuse', 'tag')"); err != nil {
				t.Fatal(err)
			}
			select { // the listener listened before this waiter came: only the notification wakes it
			case <-wake:
			case <-time.After(30 * time.Second): // failure guard only
				t.Fatal("the notification never woke the waiter")
			}
		}
		cancel()
	}
	h.mu.Lock()
	connects := h.connects
	h.mu.Unlock()
	if connects != 1 {
		t.Errorf("5 waiters one after another opened %d listener connections, want 1", connects)
	}
	if hooked.Load() == 0 {
		t.Error("the listener's connection did not come through the pool's AfterConnect")
	}
}

// TestIdleListenerStops: the listener stops once no waiter came for the
// idle period, and a later waiter starts another.
func TestIdleListenerStops(t *testing.T) {
	var hooked atomic.Int64
	p := pool(t, &hooked)
	h := New(p, "pgnotify_test_idle", nil)
	h.idle = 10 * time.Millisecond
	defer h.Close()
	_, cancel := h.Subscribe("tag")
	waitListening(t, h)
	cancel()
	deadline := time.Now().Add(30 * time.Second) // failure guard only
	for h.Listening() {
		if time.Now().After(deadline) {
			t.Fatal("the idle listener never stopped")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, cancel = h.Subscribe("tag")
	defer cancel()
	waitListening(t, h)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.connects != 2 {
		t.Errorf("%d listener connections, want 2 (one per busy period)", h.connects)
	}
}
