package cortexr_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/cortexr"
	"github.com/agentgraph/agentgraph/examples/internal/sandbox/sandboxtest"
)

// TestHostilePlans runs, as a plan, each program that once brought down
// the process running it: the attempt fails with a sandbox error naming the
// limit and spends a lifeline, the next plan answers, and the agent's heap
// is back where it was.
func TestHostilePlans(t *testing.T) {
	const recover = "def solve():\n    return 'FINAL_ANSWER: recovered'\n"
	runPlan := func(t *testing.T, plan string) ([]cortexr.Event, *cortexr.Answer) {
		m := llmtest.New().
			On("perception engine", llmtest.Text(`{"intent":"compute","entities":[],"selected_servers":["math"]}`)).
			On("Write a Starlark function", llmtest.Text(plan), llmtest.Text(recover))
		a := newAgent(t, cortexr.Config{Model: scripted(t, m), Lifelines: 1, MemoryDir: t.TempDir(),
			Limits: cortexr.Limits{MaxSteps: 1 << 40, Timeout: 3 * time.Second}})
		return run(t, a, "Compute something large")
	}
	// A first plan starts the sandbox's worker, so the baseline has it.
	if _, ans := runPlan(t, recover); ans.Outcome != cortexr.OutcomeAnswered {
		t.Fatalf("a plain plan: %+v", ans)
	}
	before := sandboxtest.HeapAlloc()
	for _, prog := range sandboxtest.Hostile {
		t.Run(prog.Name, func(t *testing.T) {
			evs, ans := runPlan(t, prog.Plan())
			var failure string
			for _, ev := range evs {
				if ev.Kind == cortexr.EventAction && ev.Attempt == 1 {
					failure = ev.Error
				}
			}
			named := false
			for _, k := range prog.Kinds {
				named = named || strings.Contains(failure, k.String()+" error")
			}
			if !named {
				t.Errorf("first attempt failed with %q, naming none of %v", failure, prog.Kinds)
			}
			if ans.Outcome != cortexr.OutcomeAnswered || ans.Text != "recovered" {
				t.Errorf("answer %+v, want the second plan's", ans)
			}
		})
	}
	if after := sandboxtest.HeapAlloc(); after > before+32<<20 {
		t.Errorf("heap grew from %d to %d bytes", before, after)
	}
}
