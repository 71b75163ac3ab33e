package mcp

import (
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestLogBudget: a server logs a burst of serverLogBurst entries at once,
// then serverLogRate a second; the first entry logged after some were
// suppressed says how many.
func TestLogBudget(t *testing.T) {
	var b logBudget
	t0 := time.Unix(1000, 0)
	for i := range serverLogBurst {
		if ok, _ := b.take(t0); !ok {
			t.Fatalf("entry %d of the burst suppressed", i)
		}
	}
	for range 5 {
		if ok, _ := b.take(t0); ok {
			t.Fatal("an entry over the burst was logged")
		}
	}
	t1 := t0.Add(time.Second)
	for i := range serverLogRate {
		ok, skipped := b.take(t1)
		if !ok {
			t.Fatalf("entry %d of the second's %d suppressed", i, serverLogRate)
		}
		want := int64(0)
		if i == 0 {
			want = 5
		}
		if skipped != want {
			t.Fatalf("entry %d: suppressed before = %d, want %d", i, skipped, want)
		}
	}
	if ok, _ := b.take(t1); ok {
		t.Fatal("an entry over the second's rate was logged")
	}
	// A long quiet period refills the burst, no more.
	t2 := t1.Add(time.Hour)
	n := 0
	for {
		if ok, _ := b.take(t2); !ok {
			break
		}
		n++
	}
	if n != serverLogBurst {
		t.Fatalf("%d entries logged after an hour's quiet, want the burst %d", n, serverLogBurst)
	}
}

// TestServerLogBelowLevelTakesNoBudget: notifications below the logger's
// level are not logged and take none of the budget, so that a server's
// debug chatter does not suppress its next error.
func TestServerLogBelowLevelTakesNoBudget(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	c := &conn{log: zap.New(core)}
	for range 2 * serverLogBurst {
		c.serverLog(map[string]any{"level": "debug", "data": "chatter"})
	}
	c.serverLog(map[string]any{"level": "error", "data": "failed"})
	entries := logs.FilterMessage("mcp server log").All()
	if len(entries) != 1 || entries[0].Level != zap.ErrorLevel {
		t.Fatalf("logged %d entries (%v), want the error alone", len(entries), entries)
	}
	if n := c.logs.suppressed.Load(); n != 0 {
		t.Fatalf("SuppressedLogs = %d, want 0: entries below the logger's level are not suppressed", n)
	}
}
