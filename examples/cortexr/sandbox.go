package cortexr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.starlark.net/lib/math"
	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkjson"
	"go.starlark.net/syntax"
)

// Defaults of Limits.
const (
	DefaultPlanSteps    = 1_000_000
	DefaultPlanTimeout  = 10 * time.Second
	DefaultMaxToolCalls = 5
)

// Limits bound one plan run in the sandbox. Zero fields take the defaults.
type Limits struct {
	// MaxSteps stops the plan after this many Starlark execution steps.
	// Zero means DefaultPlanSteps.
	MaxSteps uint64
	// Timeout stops the plan after this much wall time, tool calls
	// included. Zero means DefaultPlanTimeout.
	Timeout time.Duration
	// MaxToolCalls bounds the tool calls of one plan, the seed's
	// MAX_TOOL_CALLS_PER_PLAN. Zero means DefaultMaxToolCalls.
	MaxToolCalls int
}

func (l Limits) withDefaults() Limits {
	if l.MaxSteps == 0 {
		l.MaxSteps = DefaultPlanSteps
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultPlanTimeout
	}
	if l.MaxToolCalls == 0 {
		l.MaxToolCalls = DefaultMaxToolCalls
	}
	return l
}

// ToolFunc calls the MCP tool name with args and returns the tool's value:
// its structured content's "result" when it has one, else the structured
// content, else its text. A tool that reports failure is an error.
type ToolFunc func(ctx context.Context, name string, args map[string]any) (any, error)

// PlanError reports a plan that could not run to its end: it did not define
// solve(), did not parse, raised an error, called a tool that failed, or hit
// a limit. The loop spends a lifeline on it.
type PlanError struct {
	// Kind is "invalid plan", "syntax", "runtime", "tool", "step limit",
	// "time limit", "tool call limit" or "cancelled".
	Kind string
	// Msg says what went wrong.
	Msg string
}

// Error says what stopped the plan.
func (e *PlanError) Error() string { return "cortexr: plan " + e.Kind + " error: " + e.Msg }

// ErrLoadDisabled is what a plan's load statement fails with: plans cannot
// import modules or read files.
var ErrLoadDisabled = errors.New("load is disabled: plans run in a sandbox and cannot import modules or read files")

var errTimeLimit = errors.New("time limit")

// planOptions allow while loops and top-level statements but not recursion,
// which could exhaust the Go stack before the step limit stops it.
var planOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

var solveDef = regexp.MustCompile(`(?m)^\s*def\s+solve\s*\(\s*\)\s*:`)

// RunPlan runs a Starlark plan in a sandbox and returns what its solve()
// returned, formatted as the seed's action module does: a string as it is,
// a dict's "result" entry, a list's items joined by spaces, anything else
// in Starlark's notation.
//
// The plan sees Starlark's built-ins, a Python-like sum, the json and math
// modules, and one function per name in tools, called with keyword arguments
// (strings_to_chars_to_int(string="INDIA")). Nothing else: no load, no files,
// no network, no clock, no environment. It stops at lim's step, time and tool
// call limits and when ctx is cancelled.
func RunPlan(ctx context.Context, code string, tools []string, call ToolFunc, lim Limits) (string, error) {
	lim = lim.withDefaults()
	if !solveDef.MatchString(code) {
		return "", &PlanError{Kind: "invalid plan", Msg: "the plan does not define solve(); write `def solve():` returning \"FINAL_ANSWER: ...\" or \"FURTHER_PROCESSING_REQUIRED: ...\""}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, lim.Timeout, errTimeLimit)
	defer cancel()
	thread := &starlark.Thread{
		Name:  "plan",
		Print: func(*starlark.Thread, string) {},
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) {
			return nil, ErrLoadDisabled
		},
	}
	thread.SetMaxExecutionSteps(lim.MaxSteps)
	stop := context.AfterFunc(ctx, func() { thread.Cancel(context.Cause(ctx).Error()) })
	defer stop()

	calls := 0
	env := starlark.StringDict{
		"json": starlarkjson.Module,
		"math": math.Module,
		"sum":  sumBuiltin(ctx, lim.MaxSteps),
	}
	for _, name := range tools {
		env[name] = starlark.NewBuiltin(name, func(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(args) > 0 {
				return nil, fmt.Errorf("%s: pass arguments by name, as in %s(a=1, b=2)", name, name)
			}
			calls++
			if calls > lim.MaxToolCalls {
				return nil, &PlanError{Kind: "tool call limit", Msg: fmt.Sprintf("the plan made more than %d tool calls", lim.MaxToolCalls)}
			}
			in := starlark.NewDict(len(kwargs))
			for _, kv := range kwargs {
				if err := in.SetKey(kv[0], kv[1]); err != nil {
					return nil, err
				}
			}
			var goArgs map[string]any
			if err := fromStarlark(thread, in, &goArgs); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			v, err := call(ctx, name, goArgs)
			if err != nil {
				return nil, &PlanError{Kind: "tool", Msg: fmt.Sprintf("%s: %v", name, err)}
			}
			return toStarlark(thread, v)
		})
	}

	globals, err := starlark.ExecFileOptions(planOptions, thread, "plan.star", code, env)
	if err == nil {
		solve, ok := globals["solve"].(starlark.Callable)
		if !ok {
			return "", &PlanError{Kind: "invalid plan", Msg: "solve is not a function"}
		}
		var v starlark.Value
		if v, err = starlark.Call(thread, solve, nil, nil); err == nil {
			return formatResult(v), nil
		}
	}
	var pe *PlanError
	var evalErr *starlark.EvalError
	var syntaxErr syntax.Error
	var resolveErr resolve.ErrorList
	steps := thread.ExecutionSteps()
	switch {
	case errors.Is(context.Cause(ctx), errTimeLimit):
		return "", &PlanError{Kind: "time limit", Msg: fmt.Sprintf("the plan ran longer than %v and was stopped after %d steps", lim.Timeout, steps)}
	case ctx.Err() != nil:
		return "", &PlanError{Kind: "cancelled", Msg: fmt.Sprintf("the run ended (%v) before the plan finished", context.Cause(ctx))}
	case steps >= lim.MaxSteps:
		return "", &PlanError{Kind: "step limit", Msg: fmt.Sprintf("the plan exceeded the limit of %d execution steps", lim.MaxSteps)}
	case errors.As(err, &pe):
		return "", pe
	case errors.As(err, &syntaxErr) || errors.As(err, &resolveErr):
		return "", &PlanError{Kind: "syntax", Msg: err.Error()}
	case errors.As(err, &evalErr):
		return "", &PlanError{Kind: "runtime", Msg: evalErr.Backtrace()}
	default:
		return "", &PlanError{Kind: "runtime", Msg: err.Error()}
	}
}

// formatResult renders solve()'s value as the seed's action module does.
func formatResult(v starlark.Value) string {
	switch v := v.(type) {
	case starlark.String:
		return string(v)
	case *starlark.Dict:
		if r, ok, _ := v.Get(starlark.String("result")); ok {
			return formatResult(r)
		}
	case *starlark.List:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = formatResult(v.Index(i))
		}
		return strings.Join(parts, " ")
	}
	return v.String()
}

// fromStarlark converts a Starlark value to Go through JSON.
func fromStarlark(thread *starlark.Thread, v starlark.Value, out any) error {
	enc := starlarkjson.Module.Members["encode"]
	s, err := starlark.Call(thread, enc, starlark.Tuple{v}, nil)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(s.(starlark.String)), out)
}

// toStarlark converts a Go value to Starlark through JSON.
func toStarlark(thread *starlark.Thread, v any) (starlark.Value, error) {
	if s, ok := v.(string); ok {
		return starlark.String(s), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := starlarkjson.Module.Members["decode"]
	return starlark.Call(thread, dec, starlark.Tuple{starlark.String(b)}, nil)
}

// sumBuiltin returns sum(iterable, start=0), which adds the items of
// iterable to start as Python's sum does. Each item counts as an execution
// step, so the step limit and cancellation, which the interpreter checks
// only between its own instructions, reach a sum over a huge range.
func sumBuiltin(ctx context.Context, maxSteps uint64) *starlark.Builtin {
	return starlark.NewBuiltin("sum", func(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var iterable starlark.Iterable
		var acc starlark.Value = starlark.MakeInt(0)
		if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "iterable", &iterable, "start?", &acc); err != nil {
			return nil, err
		}
		it := iterable.Iterate()
		defer it.Done()
		var x starlark.Value
		for it.Next(&x) {
			thread.Steps++
			if thread.Steps >= maxSteps || (thread.Steps%1024 == 0 && ctx.Err() != nil) {
				return nil, errors.New("sum stopped by the plan's limits")
			}
			var err error
			if acc, err = starlark.Binary(syntax.PLUS, acc, x); err != nil {
				return nil, fmt.Errorf("sum: %w", err)
			}
		}
		return acc, nil
	})
}
