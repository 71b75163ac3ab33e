package memory_test

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/memory"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestResults(t *testing.T) {
	var rs memory.Results // the zero value is ready
	if _, ok := rs.Get("step_1"); ok || rs.Len() != 0 || len(rs.All()) != 0 {
		t.Fatal("zero Results is not empty")
	}
	for _, r := range []memory.Result{
		{ID: "step_1", Name: "Rewrite Query", Output: "pricing"},
		{ID: "step_2", Output: map[string]int{"hits": 3}},
		{ID: "step_1", Name: "Rewrite Query", Output: "pricing 2026"}, // a retry replaces
	} {
		if err := rs.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := rs.Put(memory.Result{Output: "x"}); err == nil || !strings.Contains(err.Error(), "Result.ID is empty") {
		t.Errorf("Put without ID: %v, want an error naming Result.ID", err)
	}
	got := rs.All()
	if diff := cmp.Diff([]string{"step_1", "step_2"}, rs.IDs()); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if got[0].Output != "pricing 2026" || got[0].Time.IsZero() {
		t.Errorf("step_1 = %+v, want the replacement with a Time", got[0])
	}
	if r, ok := rs.Get("step_2"); !ok || r.Text() != `{"hits":3}` {
		t.Errorf("Get(step_2) = %+v, %v", r, ok)
	}
}

func TestResultText(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    memory.Result
		want string
	}{
		{"string", memory.Result{Output: "plain"}, "plain"},
		{"bytes", memory.Result{Output: []byte("raw")}, "raw"},
		{"stringer", memory.Result{Output: net.IPv4(10, 0, 0, 1)}, "10.0.0.1"},
		{"struct as JSON", memory.Result{Output: struct {
			Query string `json:"query"`
		}{"q"}}, `{"query":"q"}`},
		{"not JSON", memory.Result{Output: func() {}}, "0x"},
		{"nil", memory.Result{}, ""},
		{"failed", memory.Result{Output: "ignored", Err: errors.New("timeout")}, "error: timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Text(); !strings.HasPrefix(got, tc.want) {
				t.Errorf("Text() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestResultsConcurrent(t *testing.T) {
	var rs memory.Results
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if err := rs.Put(memory.Result{ID: fmt.Sprintf("%d-%d", w, i), Output: i}); err != nil {
					t.Error(err)
				}
				rs.All()
			}
		})
	}
	wg.Wait()
	if rs.Len() != 400 {
		t.Errorf("%d results, want 400", rs.Len())
	}
}

func TestActions(t *testing.T) {
	var h memory.Actions
	a := h.Begin("call_tool", "web_search", `query="pricing"`)
	b := h.Begin("workflow", "Compare pricing", "")
	if err := h.Finish(a, errors.New("timeout")); err != nil {
		t.Fatal(err)
	}
	if err := h.Finish(b, nil); err != nil {
		t.Fatal(err)
	}
	c := h.Begin("answer", "", "")
	d := h.Record(memory.Action{Kind: "clarify", Name: "budget?"})
	e := h.Record(memory.Action{Kind: "call_tool", Name: "calc", Err: errors.New("bad input")})
	if err := h.Finish(a, nil); err == nil || !strings.Contains(err.Error(), "already finished") {
		t.Errorf("second Finish: %v, want an error saying it already finished", err)
	}
	if err := h.Finish(99, nil); err == nil || !strings.Contains(err.Error(), "no action 99") {
		t.Errorf("Finish of an unknown id: %v", err)
	}
	all := h.All()
	want := []memory.Action{
		{ID: a, Kind: "call_tool", Name: "web_search", Detail: `query="pricing"`, Status: memory.StatusFailed},
		{ID: b, Kind: "workflow", Name: "Compare pricing", Status: memory.StatusSucceeded},
		{ID: c, Kind: "answer", Status: memory.StatusRunning},
		{ID: d, Kind: "clarify", Name: "budget?", Status: memory.StatusSucceeded},
		{ID: e, Kind: "call_tool", Name: "calc", Status: memory.StatusFailed},
	}
	opts := cmp.Options{
		cmpopts.IgnoreFields(memory.Action{}, "Started", "Ended", "Err"),
	}
	if diff := cmp.Diff(want, all, opts); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	for i, x := range all {
		if x.Started.IsZero() || (x.Status != memory.StatusRunning) == x.Ended.IsZero() || x.Ended.Before(x.Started) && !x.Ended.IsZero() {
			t.Errorf("action %d timing: started %v ended %v status %s", i+1, x.Started, x.Ended, x.Status)
		}
	}
	if all[0].Err == nil || all[0].Err.Error() != "timeout" {
		t.Errorf("failed action Err = %v, want timeout", all[0].Err)
	}
	if got := all[2].String(); got != "3. answer (running)" {
		t.Errorf("running action String() = %q", got)
	}
	if got := all[0].String(); !strings.HasPrefix(got, "1. call_tool web_search (failed after ") || !strings.HasSuffix(got, `: timeout): query="pricing"`) {
		t.Errorf("failed action String() = %q", got)
	}
}

func TestActionString(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		a    memory.Action
		want string
	}{
		{memory.Action{ID: 1, Kind: "call_tool", Name: "web_search", Status: memory.StatusSucceeded, Started: start, Ended: start.Add(1234 * time.Millisecond)},
			"1. call_tool web_search (succeeded in 1.234s)"},
		{memory.Action{ID: 2, Kind: "workflow", Status: memory.StatusFailed, Err: errors.New("step_3 failed"), Started: start, Ended: start.Add(2 * time.Second), Detail: "Compare pricing"},
			"2. workflow (failed after 2s: step_3 failed): Compare pricing"},
	} {
		if got := tc.a.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestActionsConcurrent(t *testing.T) {
	var h memory.Actions
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				id := h.Begin("call_tool", "t", "")
				if err := h.Finish(id, nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	all := h.All()
	if len(all) != 200 {
		t.Fatalf("%d actions, want 200", len(all))
	}
	for i, a := range all {
		if int(a.ID) != i+1 || a.Status != memory.StatusSucceeded {
			t.Errorf("action %d = id %d status %s", i+1, a.ID, a.Status)
		}
	}
}
