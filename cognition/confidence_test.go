package cognition_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/memory"
)

func TestMonitorConfidence(t *testing.T) {
	t.Parallel()
	m := cognition.NewMonitor(cognition.MonitorConfig{Window: 10, MinTurns: 10, FailureRate: 0.5})
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("confidence with no turns", m.Confidence(""), 0.5)
	for range 7 {
		m.Record(turn("a", cognition.Success, time.Second))
	}
	m.Record(turn("p", cognition.Partial, time.Second))
	near("after 7 successes and a partial", m.Confidence(""), (7+0.5+1)/10.0)
	m.Record(turn("b", cognition.Failure, time.Second))
	m.Record(turn("b", cognition.Failure, time.Second))
	all := (7 + 0.5 + 1) / 12.0
	near("for no user", m.Confidence(""), all)
	near("for a user with a success", m.Confidence("a"), all)
	near("for a user after a partial", m.Confidence("p"), all/2)
	near("for a user after 2 failures", m.Confidence("b"), all/3)
	near("in the snapshot", m.Snapshot().Confidence, all)
	for range 6 { // the window now holds 8 failures of 10: HighFailureRate
		m.Record(turn("c", cognition.Failure, time.Second))
	}
	near("with a high failure rate", m.Confidence(""), (1+0.5+1)/12.0/2)
}

func TestIdentityValues(t *testing.T) {
	values := []string{"be honest about uncertainty", "keep user data private"}
	store := cognition.NewInMemoryStore()
	svc, err := cognition.New(cognition.Config{Store: store, Values: values, ContextTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(t.Context())
	cc, err := svc.Context(t.Context(), "u", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cc.Render(), "Core values: be honest about uncertainty; keep user data private") {
		t.Errorf("Render() = %q, want the core values", cc.Render())
	}
	err = svc.Learn(t.Context(), cognition.Interaction{UserID: "u", Messages: []memory.Message{{Role: memory.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := store.Identity(t.Context(), cognition.DefaultAgent)
	if err != nil || len(id.Values) != 2 || id.Values[1] != values[1] {
		t.Errorf("stored identity = %+v, %v; want the core values saved", id, err)
	}
	off, err := cognition.New(cognition.Config{Store: store, Values: values, Disabled: cognition.Disabled{Identity: true}, ContextTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close(t.Context())
	if cc, _ := off.Context(t.Context(), "u", ""); strings.Contains(cc.Render(), "Core values") {
		t.Errorf("with identity off, Render() = %q, want no core values", cc.Render())
	}
}
