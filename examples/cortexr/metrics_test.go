package cortexr_test

import (
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/cortexr"
)

// Metrics come from an injected clock that advances one millisecond a
// reading: every timed span is a whole number of ticks.
func TestMetrics(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(0, 0)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Millisecond)
		return now
	}
	m := llmtest.New().
		On("perception engine", llmtest.Text(mathPerception)).
		On("Write a Starlark function", llmtest.Text("def solve():\n    return 1 // 0\n"), llmtest.Text(indiaPlan))
	a := newAgent(t, cortexr.Config{Model: scripted(t, m), Servers: mathOnly(), Clock: clock})
	_, ans := run(t, a, india)
	mt := ans.Metrics
	if len(mt.Attempts) != 2 || !mt.Attempts[0].Failed || mt.Attempts[1].Failed || mt.Attempts[1].ToolCalls != 2 {
		t.Fatalf("attempts %+v", mt.Attempts)
	}
	for _, at := range mt.Attempts {
		if at.Perception != time.Millisecond || at.Decision != time.Millisecond || at.Action < time.Millisecond {
			t.Errorf("attempt %+v: want one tick per model call and at least one for the action", at)
		}
	}
	for _, name := range []string{"strings_to_chars_to_int", "int_list_to_exponential_sum"} {
		if tm := mt.Tools[name]; tm.Calls != 1 || tm.Failures != 0 || tm.Total != time.Millisecond || tm.Max != time.Millisecond {
			t.Errorf("%s: %+v", name, tm)
		}
	}
	if mt.Model != 4*time.Millisecond {
		t.Errorf("model time %v, want 4 ticks", mt.Model)
	}
}
