package cognition_test

import (
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func turn(user string, outcome cognition.Outcome, latency time.Duration, tools ...cognition.ToolCall) cognition.Interaction {
	return cognition.Interaction{UserID: user, Outcome: outcome, Latency: latency, Tokens: 100, Tools: tools, Time: t0}
}

func TestMonitorToolFailing(t *testing.T) {
	t.Parallel()
	var started []cognition.Pattern
	m := cognition.NewMonitor(cognition.MonitorConfig{OnPattern: func(p cognition.Pattern) { started = append(started, p) }})
	fail := cognition.ToolCall{Name: "web_search", Err: "HTTP 503"}
	for range 2 {
		m.Record(turn("u1", cognition.Success, time.Second, fail, cognition.ToolCall{Name: "calc"}))
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
	m.Record(turn("u1", cognition.Success, time.Second, cognition.ToolCall{Name: "web_search"}))
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
