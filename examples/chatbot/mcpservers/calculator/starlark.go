package calculator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.starlark.net/lib/math"
	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkjson"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// RunResult is what a Starlark program produced.
type RunResult struct {
	// Output is everything the program printed, one line per print call.
	Output string `json:"output"`
	// Truncated reports that Output was cut at Config.MaxOutput bytes.
	Truncated bool `json:"truncated,omitempty"`
	// Result is the repr of the global named "result", if the program
	// defined one.
	Result string `json:"result,omitempty"`
	// Steps is the number of interpreter steps the program took.
	Steps uint64 `json:"steps"`
}

// Limits bound one program run.
type Limits struct {
	// MaxSteps stops the program after this many interpreter steps.
	MaxSteps uint64
	// Timeout stops the program after this much wall time.
	Timeout time.Duration
	// MaxOutput caps the captured output in bytes.
	MaxOutput int
}

// RunError reports a program that failed: it did not parse, raised an error,
// or hit a limit. Output holds what it printed before.
type RunError struct {
	// Kind is "syntax", "runtime", "step limit", "time limit" or "cancelled".
	Kind string
	// Msg explains the failure; for runtime errors it includes the
	// Starlark backtrace.
	Msg string
	// Output is what the program printed before it failed.
	Output string
	// Steps is how many steps ran.
	Steps uint64
}

// Error says which limit or failure stopped the program.
func (e *RunError) Error() string { return "calculator: " + e.Kind + " error: " + e.Msg }

// ErrLoadDisabled is what a program's load statement fails with.
var ErrLoadDisabled = errors.New("load is disabled: programs run in a sandbox and cannot import modules or read files")

// fileOptions allow the Python-like statements people expect (while loops,
// top-level if/for, reassigning globals, sets) but not recursion, which
// could exhaust the Go stack before the step limit stops it.
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// predeclared is what programs can use besides the Starlark built-ins:
// the math, json and struct modules and a Python-like sum. Nothing reaches
// files, the network, the clock or the environment.
var predeclared = starlark.StringDict{
	"math":   math.Module,
	"json":   starlarkjson.Module,
	"struct": starlark.NewBuiltin("struct", starlarkstruct.Make),
	"sum":    starlark.NewBuiltin("sum", sum),
}

// budgetKey is the thread-local key of a run's *budget.
const budgetKey = "calculator.budget"

// budget lets built-ins that loop (sum) count their iterations as steps and
// notice cancellation, which the interpreter only checks between its own
// instructions.
type budget struct {
	ctx      context.Context
	maxSteps uint64
}

var (
	errBudget    = errors.New("stopped")
	errTimeLimit = errors.New("time limit")
)

func charge(thread *starlark.Thread) error {
	b, _ := thread.Local(budgetKey).(*budget)
	if b == nil {
		return nil
	}
	thread.Steps++
	if b.maxSteps > 0 && thread.Steps >= b.maxSteps {
		return errBudget
	}
	if thread.Steps%1024 == 0 && b.ctx.Err() != nil {
		return errBudget
	}
	return nil
}

// sum(iterable, start=0) adds the elements of iterable to start with +.
func sum(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var iterable starlark.Iterable
	var acc starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "iterable", &iterable, "start?", &acc); err != nil {
		return nil, err
	}
	it := iterable.Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		if err := charge(thread); err != nil {
			return nil, err
		}
		var err error
		if acc, err = starlark.Binary(syntax.PLUS, acc, x); err != nil {
			return nil, fmt.Errorf("sum: %w", err)
		}
	}
	return acc, nil
}

// Run executes a Starlark program in a sandbox under the given limits. It
// stops when ctx is cancelled.
func Run(ctx context.Context, code string, lim Limits) (*RunResult, error) {
	out := &boundedBuffer{max: lim.MaxOutput}
	thread := &starlark.Thread{
		Name:  "run_code",
		Print: func(_ *starlark.Thread, msg string) { out.writeLine(msg) },
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) {
			return nil, ErrLoadDisabled
		},
	}
	if lim.MaxSteps > 0 {
		thread.SetMaxExecutionSteps(lim.MaxSteps)
	}
	if lim.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, lim.Timeout, errTimeLimit)
		defer cancel()
	}
	thread.SetLocal(budgetKey, &budget{ctx: ctx, maxSteps: lim.MaxSteps})
	stop := context.AfterFunc(ctx, func() { thread.Cancel(context.Cause(ctx).Error()) })
	defer stop()

	globals, err := starlark.ExecFileOptions(fileOptions, thread, "code.star", code, predeclared)
	steps := thread.ExecutionSteps()
	if err != nil {
		re := &RunError{Kind: "runtime", Msg: err.Error(), Output: out.String(), Steps: steps}
		var evalErr *starlark.EvalError
		var syntaxErr syntax.Error
		var resolveErr resolve.ErrorList
		switch {
		case errors.Is(context.Cause(ctx), errTimeLimit):
			re.Kind, re.Msg = "time limit", fmt.Sprintf("the program ran longer than %v and was stopped after %d steps; make it do less work", lim.Timeout, steps)
		case ctx.Err() != nil:
			re.Kind, re.Msg = "cancelled", fmt.Sprintf("the call ended (%v) before the program finished", context.Cause(ctx))
		case lim.MaxSteps > 0 && steps >= lim.MaxSteps:
			re.Kind, re.Msg = "step limit", fmt.Sprintf("the program exceeded the limit of %d execution steps; reduce loop counts or simplify it", lim.MaxSteps)
		case errors.As(err, &evalErr):
			re.Msg = evalErr.Backtrace()
		case errors.As(err, &syntaxErr) || errors.As(err, &resolveErr):
			re.Kind = "syntax"
		}
		return nil, re
	}
	res := &RunResult{Output: out.String(), Truncated: out.truncated, Steps: steps}
	if v, ok := globals["result"]; ok {
		res.Result = v.String()
	}
	return res, nil
}

// boundedBuffer keeps at most max bytes of output.
type boundedBuffer struct {
	b         strings.Builder
	max       int
	truncated bool
}

func (w *boundedBuffer) writeLine(s string) {
	if w.truncated {
		return
	}
	if w.max > 0 && w.b.Len()+len(s)+1 > w.max {
		w.b.WriteString(s[:max(0, min(len(s), w.max-w.b.Len()))])
		w.truncated = true
		return
	}
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

func (w *boundedBuffer) String() string { return w.b.String() }
