package cognition_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/internal/heaptest"
	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func turn(user string, outcome cognition.Outcome, latency time.Duration, tools ...cognition.ToolOutcome) cognition.Interaction {
	return cognition.Interaction{UserID: user, Outcome: outcome, Latency: latency, Tokens: 100, Tools: tools, Time: t0}
}

func TestMonitorToolFailing(t *testing.T) {
	t.Parallel()
	var started []cognition.Pattern
	m := cognition.NewMonitor(cognition.MonitorConfig{OnPattern: func(p cognition.Pattern) { started = append(started, p) }})
	fail := cognition.ToolOutcome{Name: "web_search", Err: "HTTP 503"}
	for range 2 {
		m.Record(turn("u1", cognition.Success, time.Second, fail, cognition.ToolOutcome{Name: "calc"}))
	}
	if p := m.Patterns(); len(p) != 0 {
		t.Fatalf("patterns after 2 failures = %v, want none", p)
	}
	for range 2 {
		m.Record(turn("u1", cognition.Success, time.Second, fail))
	}
	want := []cognition.Pattern{{Kind: cognition.ToolFailing, Subject: "web_search", Detail: "failed 4 times in a row; last error: HTTP 503", Since: t0}}
	if diff := cmp.Diff(want, m.Patterns()); diff != "" {
		t.Errorf("patterns (-want +got):\n%s", diff)
	}
	if len(started) != 1 || started[0].Subject != "web_search" {
		t.Errorf("OnPattern calls = %v, want one for web_search", started)
	}
	snap := m.Snapshot()
	if diff := cmp.Diff(map[string]cognition.ToolStats{
		"web_search": {Calls: 4, Failures: 4, Streak: 4, LastError: "HTTP 503"},
		"calc":       {Calls: 2},
	}, snap.Tools); diff != "" {
		t.Errorf("tool stats (-want +got):\n%s", diff)
	}
	// A success ends the pattern.
	m.Record(turn("u1", cognition.Success, time.Second, cognition.ToolOutcome{Name: "web_search"}))
	if p := m.Patterns(); len(p) != 0 {
		t.Errorf("patterns after the tool recovered = %v, want none", p)
	}
}

func TestMonitorUserStruggling(t *testing.T) {
	t.Parallel()
	m := cognition.NewMonitor(cognition.MonitorConfig{})
	for _, o := range []cognition.Outcome{cognition.Failure, cognition.Partial, cognition.Failure} {
		m.Record(turn("alice", o, time.Second))
		m.Record(turn("bob", cognition.Success, time.Second))
	}
	got := m.Patterns()
	if len(got) != 1 || got[0].Kind != cognition.UserStruggling || got[0].Subject != "alice" {
		t.Fatalf("patterns = %v, want alice struggling", got)
	}
	m.Record(turn("alice", cognition.Success, time.Second))
	if p := m.Patterns(); len(p) != 0 {
		t.Errorf("patterns after alice succeeded = %v, want none", p)
	}
}

func TestMonitorWindow(t *testing.T) {
	t.Parallel()
	m := cognition.NewMonitor(cognition.MonitorConfig{Window: 10, MinTurns: 10, SlowTurn: 5 * time.Second, UserStreak: 100})
	for i := range 10 {
		o := cognition.Success
		if i%2 == 0 {
			o = cognition.Failure
		}
		m.Record(turn("u", o, time.Duration(i+1)*time.Second))
	}
	snap := m.Snapshot()
	var kinds []cognition.PatternKind
	for _, p := range snap.Patterns {
		kinds = append(kinds, p.Kind)
	}
	if diff := cmp.Diff([]cognition.PatternKind{cognition.HighFailureRate, cognition.SlowTurns}, kinds); diff != "" {
		t.Errorf("pattern kinds (-want +got):\n%s", diff)
	}
	if snap.Turns != 10 || snap.Failures != 5 || snap.Tokens != 1000 || snap.SuccessRate != 0.5 {
		t.Errorf("snapshot = %+v", snap)
	}
	if snap.P50 != 5*time.Second || snap.P95 != 9*time.Second {
		t.Errorf("P50, P95 = %v, %v; want 5s, 9s", snap.P50, snap.P95)
	}
	// Ten fast successes push the window past the bad turns.
	for range 10 {
		m.Record(turn("u", cognition.Success, time.Second))
	}
	snap = m.Snapshot()
	if len(snap.Patterns) != 0 || snap.SuccessRate != 1 || snap.Window != 10 || snap.Turns != 20 {
		t.Errorf("snapshot after recovery = %+v, want no patterns, success rate 1 over a window of 10, 20 turns", snap)
	}
}

// TestMonitorCapsUserPatterns: 2,000 struggling users give MaxUserPatterns
// named patterns and one that counts the rest, not 2,000.
func TestMonitorCapsUserPatterns(t *testing.T) {
	t.Parallel()
	m := cognition.NewMonitor(cognition.MonitorConfig{MaxUserPatterns: 50})
	for i := range 2000 {
		for range 3 {
			m.Record(turn(fmt.Sprintf("u%05d", i), cognition.Partial, time.Second))
		}
	}
	got := m.Patterns()
	if len(got) != 51 {
		t.Fatalf("%d patterns for 2000 struggling users; want 50 named and 1 summary", len(got))
	}
	summary := got[0] // sorted by subject: the empty one first
	if summary.Kind != cognition.UserStruggling || summary.Subject != "" || !strings.HasPrefix(summary.Detail, "1950 more users") {
		t.Fatalf("summary pattern = %v; want 1950 more users", summary)
	}
	// A named user who succeeds leaves; an unnamed one lowers the count.
	m.Record(turn("u00000", cognition.Success, time.Second))
	m.Record(turn("u01999", cognition.Success, time.Second))
	got = m.Patterns()
	if len(got) != 50 || !strings.HasPrefix(got[0].Detail, "1949 more users") {
		t.Fatalf("after two successes: %d patterns, summary %q; want 50 and 1949 more users", len(got), got[0].Detail)
	}
}

// TestMonitorBoundedMemory: 100,000 distinct users and tool names keep the
// monitor under 8 MB, with at most MaxUsers streaks, MaxTools tool entries
// (plus OtherTools) and MaxUserPatterns+1 user patterns.
func TestMonitorBoundedMemory(t *testing.T) {
	const n = 100_000
	const bound = 8 << 20
	var m *cognition.Monitor
	grew := heaptest.Growth(func() {
		// One failure makes a user struggle and a tool fail: every key
		// is kept as long as the caps allow.
		m = cognition.NewMonitor(cognition.MonitorConfig{UserStreak: 1, ToolStreak: 1, Window: 10})
		for i := range n {
			tool := cognition.ToolOutcome{Name: fmt.Sprintf("tool-%06d", i), Err: "boom"}
			m.Record(turn(fmt.Sprintf("user-%06d", i), cognition.Failure, time.Second, tool))
		}
	})
	snap := m.Snapshot()
	runtime.KeepAlive(m)
	if grew > bound {
		t.Errorf("the monitor holds %d bytes after %d users and tools; want under %d", grew, n, bound)
	}
	if len(snap.Tools) > 1001 || snap.Tools[cognition.OtherTools].Calls == 0 {
		t.Errorf("%d tool entries, %d calls under %q; want at most 1001 with the rest counted there", len(snap.Tools), snap.Tools[cognition.OtherTools].Calls, cognition.OtherTools)
	}
	users := 0
	for _, p := range snap.Patterns {
		if p.Kind == cognition.UserStruggling {
			users++
		}
	}
	if users > 101 {
		t.Errorf("%d user patterns; want at most 101", users)
	}
	t.Logf("%d users and tools: %d bytes kept, %d patterns", n, grew, len(snap.Patterns))
}
