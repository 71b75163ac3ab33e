package cortexr_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/examples/cortexr"
)

func TestRunPlan(t *testing.T) {
	t.Parallel()
	echo := func(_ context.Context, name string, args map[string]any) (any, error) {
		if name == "broken" {
			return nil, errors.New("server said no")
		}
		return map[string]any{"called": name, "args": args}, nil
	}
	for _, tc := range []struct {
		name, plan string
		lim        cortexr.Limits
		want       string // result, or the PlanError kind after "error: "
		msg        string // in the error message
	}{
		{name: "string", plan: "def solve():\n    return 'FINAL_ANSWER: ' + str(1 + 2)", want: "FINAL_ANSWER: 3"},
		{name: "dict result", plan: "def solve():\n    return {'result': 42}", want: "42"},
		{name: "list", plan: "def solve():\n    return [1, 'a', 2.5]", want: "1 a 2.5"},
		{name: "tool", plan: "def solve():\n    r = echo(x=[1, 2], s='hi')\n    return r['args']['s'] + json.encode(r['args']['x'])", want: "hi[1,2]"},
		{name: "no solve", plan: "x = 1", want: "error: invalid plan"},
		{name: "syntax", plan: "def solve():\n    return (", want: "error: syntax"},
		{name: "runtime", plan: "def solve():\n    return 1 // 0", want: "error: runtime", msg: "division by zero"},
		{name: "tool failure", plan: "def solve():\n    return broken()", want: "error: tool", msg: "server said no"},
		{name: "positional arguments", plan: "def solve():\n    return echo(1)", want: "error: runtime", msg: "pass arguments by name"},
		{name: "runaway loop, step limit", plan: "def solve():\n    while True:\n        pass", lim: cortexr.Limits{MaxSteps: 10_000}, want: "error: step limit"},
		{name: "runaway loop, time limit", plan: "def solve():\n    while True:\n        pass", lim: cortexr.Limits{MaxSteps: 1 << 62, Timeout: 50 * time.Millisecond}, want: "error: time limit"},
		{name: "sum", plan: "def solve():\n    return sum([1, 2, 3], 10)", want: "16"},
		{name: "huge sum, step limit", plan: "def solve():\n    return sum(range(1 << 40))", lim: cortexr.Limits{MaxSteps: 10_000}, want: "error: step limit"},
		{name: "huge sum, time limit", plan: "def solve():\n    return sum(range(1 << 50))", lim: cortexr.Limits{MaxSteps: 1 << 62, Timeout: 50 * time.Millisecond}, want: "error: time limit"},
		{name: "tool call limit", plan: "def solve():\n    for i in range(10):\n        echo(i=i)\n    return 'x'", lim: cortexr.Limits{MaxToolCalls: 3}, want: "error: tool call limit"},
		{name: "load refused", plan: "load('os.star', 'system')\ndef solve():\n    return system('rm -rf /')", want: "error: runtime", msg: cortexr.ErrLoadDisabled.Error()},
		{name: "no open", plan: "def solve():\n    return open('/etc/passwd').read()", want: "error: syntax", msg: "undefined: open"},
		{name: "no recursion", plan: "def f(n):\n    return f(n)\ndef solve():\n    return f(1)", want: "error: runtime", msg: "called recursively"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := cortexr.RunPlan(context.Background(), tc.plan, []string{"echo", "broken"}, echo, tc.lim)
			if err != nil {
				var pe *cortexr.PlanError
				if !errors.As(err, &pe) {
					t.Fatalf("error %T %v, want *PlanError", err, err)
				}
				got = "error: " + pe.Kind
				if !strings.Contains(pe.Msg, tc.msg) {
					t.Errorf("message %q lacks %q", pe.Msg, tc.msg)
				}
			}
			if got != tc.want {
				t.Errorf("got %q, want %q (err %v)", got, tc.want, err)
			}
		})
	}
}

func TestRunPlanCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err := cortexr.RunPlan(ctx, "def solve():\n    while True:\n        pass", nil, nil, cortexr.Limits{MaxSteps: 1 << 62, Timeout: time.Minute})
	var pe *cortexr.PlanError
	if !errors.As(err, &pe) || pe.Kind != "cancelled" {
		t.Errorf("error %v, want a cancelled PlanError", err)
	}
}

func ExampleRunPlan() {
	tools := func(_ context.Context, name string, args map[string]any) (any, error) {
		return fmt.Sprintf("%s(%v)", name, args["x"]), nil
	}
	out, err := cortexr.RunPlan(context.Background(), `
def solve():
    return "FINAL_ANSWER: " + shout(x="hi")
`, []string{"shout"}, tools, cortexr.Limits{})
	fmt.Println(out, err)
	// Output: FINAL_ANSWER: shout(hi) <nil>
}
