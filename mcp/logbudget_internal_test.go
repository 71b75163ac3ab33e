package mcp

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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

// TestStderrWithinBudget: a server's stderr is logged within a log budget
// of its own, as its notifications are: a flood costs the burst and the
// rate, the rest counted in Health.SuppressedLogs, the first entry after
// a gap saying how many were left out; a long write is cut.
func TestStderrWithinBudget(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	c := &conn{log: zap.New(core)}
	w := &stderrLog{c: c}
	const total = 10 * serverLogBurst
	start := time.Now()
	for range total {
		if n, err := w.Write([]byte("chatter\n")); n != len("chatter\n") || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	elapsed := time.Since(start)
	logged := int64(logs.FilterMessage("mcp server stderr").Len())
	// The budget refills serverLogRate a second while the writes run.
	if most := int64(serverLogBurst + serverLogRate*elapsed.Seconds() + 1); logged > most {
		t.Errorf("%d of %d stderr writes logged in %v, want at most %d", logged, total, elapsed, most)
	}
	if got := c.stderr.suppressed.Load(); logged+got != total {
		t.Errorf("%d logged + %d suppressed, want %d in all", logged, got, total)
	}

	// A write after the budget refilled says how many were left out.
	c.stderr.mu.Lock()
	c.stderr.last = c.stderr.last.Add(-time.Hour)
	c.stderr.mu.Unlock()
	long := strings.Repeat("é", maxServerLogBytes) // 2 bytes a rune
	_, _ = w.Write([]byte(long))
	entries := logs.FilterMessage("mcp server stderr").All()
	last := entries[len(entries)-1].ContextMap()
	// suppressed_before counts the writes left out since the last one
	// logged: all of them when the budget did not refill during the flood
	// (only the burst was logged); on a slow machine a refill may have let
	// a write through mid-flood, and then it counts those after it.
	if n, _ := last["suppressed_before"].(int64); logged == serverLogBurst && n != total-logged || n < 1 || n > total-logged {
		t.Errorf("suppressed_before = %v with %d of %d writes logged, want %d (or, after a refill mid-flood, 1 to %d)", last["suppressed_before"], logged, total, total-logged, total-logged)
	}
	out, _ := last["output"].(map[string]any)
	text, _ := out["text"].(string)
	if len(text) > maxServerLogBytes || !utf8.ValidString(text) || out["bytes"] != int64(len(long)) {
		t.Errorf("long write logged as %d bytes of text (valid UTF-8: %v), bytes %v; want at most %d, whole runes, and %d", len(text), utf8.ValidString(text), out["bytes"], maxServerLogBytes, len(long))
	}
}
