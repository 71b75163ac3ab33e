package cortexr_test

import (
	"bytes"
	"runtime"
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

// A plan's re calls run in the sandbox's worker, not in the agent's
// process: a replacement that would build tens of megabytes fails in the
// worker with an error naming the result limit, and a pathological search
// stops at the plan's time limit without leaving a call running here.
func TestRePlansRunInTheSandbox(t *testing.T) {
	firstError := func(t *testing.T, plan string, timeout time.Duration) string {
		m := llmtest.New().
			On("perception engine", llmtest.Text(`{"intent":"compute","entities":[],"selected_servers":["math"]}`)).
			On("Write a Starlark function", llmtest.Text(plan))
		a := newAgent(t, cortexr.Config{Model: scripted(t, m), Lifelines: -1, MemoryDir: t.TempDir(),
			Limits: cortexr.Limits{Timeout: timeout}})
		evs, _ := run(t, a, "Compute something large")
		for _, ev := range evs {
			if ev.Kind == cortexr.EventAction && ev.Attempt == 1 {
				return ev.Error
			}
		}
		return ""
	}
	failure := firstError(t, "def solve():\n    return re.sub(\"a\", \"b\" * 3000, \"a\" * 10000)\n", 0)
	if !strings.Contains(failure, "re.sub: the result comes to more than 4194304 bytes") {
		t.Errorf("a 30 MB re.sub failed with %q; want an error naming the result limit", failure)
	}

	failure = firstError(t, "def solve():\n    return str(re.search(\"(?:a?){450}a{450}b\", \"a\" * 1000000))\n", time.Second)
	if !strings.Contains(failure, "time limit error") && !strings.Contains(failure, "cpu limit error") {
		t.Errorf("a pathological search failed with %q; want a time or cpu limit", failure)
	}
	// The search ran in the worker: no goroutine of this process is in
	// the regexp package (one would still be searching had it run here).
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	if bytes.Contains(buf, []byte("regexp.(*Regexp)")) {
		t.Errorf("a regexp search is running in the agent's process:\n%s", buf)
	}
}
