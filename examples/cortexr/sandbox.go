package cortexr

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentgraph/agentgraph/examples/internal/sandbox"
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
	// "time limit", "tool call limit", "cancelled", or, when the plan's
	// worker process was stopped, "sandbox memory limit", "sandbox stack
	// limit", "sandbox cpu limit", "sandbox output limit" or "sandbox
	// crash".
	Kind string
	// Msg says what went wrong.
	Msg string
}

// Error says what stopped the plan.
func (e *PlanError) Error() string { return "cortexr: plan " + e.Kind + " error: " + e.Msg }

// ErrLoadDisabled is what a plan's load statement fails with: plans cannot
// import modules or read files.
var ErrLoadDisabled = errors.New("load is disabled: plans run in a sandbox and cannot import modules or read files")

var solveDef = regexp.MustCompile(`(?m)^\s*def\s+solve\s*\(\s*\)\s*:`)

// RunPlan runs a Starlark plan in a sandbox and returns what its solve()
// returned, formatted as the seed's action module does: a string as it is,
// a dict's "result" entry, a list's items joined by spaces, anything else
// in Starlark's notation.
//
// The plan sees Starlark's built-ins, a Python-like sum, the json, math and
// re modules (re over Go's RE2 syntax, run in the sandbox), and one function per name in tools, called with keyword arguments
// (strings_to_chars_to_int(string="INDIA")). Nothing else: no load, no files,
// no network, no clock, no environment. It stops at lim's step, time and tool
// call limits and when ctx is cancelled. The plan runs in a worker process of
// the sandbox's shared pool, under its memory, stack, CPU and output limits;
// the tools run in this process.
func RunPlan(ctx context.Context, code string, tools []string, call ToolFunc, lim Limits) (string, error) {
	return runPlan(ctx, code, tools, call, lim, nil)
}

func runPlan(ctx context.Context, code string, tools []string, call ToolFunc, lim Limits, extra map[string]sandbox.Func) (string, error) {
	lim = lim.withDefaults()
	maxCalls := lim.MaxToolCalls
	if !solveDef.MatchString(code) {
		return "", &PlanError{Kind: "invalid plan", Msg: "the plan does not define solve(); write `def solve():` returning \"FINAL_ANSWER: ...\" or \"FURTHER_PROCESSING_REQUIRED: ...\""}
	}
	var calls atomic.Int64
	funcs := make(map[string]sandbox.Func, len(tools))
	for _, name := range tools {
		funcs[name] = func(ctx context.Context, args map[string]any) (any, error) {
			if n := calls.Add(1); int(n) > lim.MaxToolCalls {
				return nil, &PlanError{Kind: "tool call limit", Msg: fmt.Sprintf("the plan made more than %d tool calls", lim.MaxToolCalls)}
			}
			return call(ctx, name, args)
		}
	}
	for name, f := range extra {
		funcs[name] = f
	}
	res, err := sandbox.Run(ctx, code, sandbox.Options{
		Filename:      "plan.star",
		MaxSteps:      lim.MaxSteps,
		Timeout:       lim.Timeout,
		Modules:       sandbox.JSON | sandbox.Math | sandbox.Sum | sandbox.Struct | sandbox.Regexp,
		Funcs:         funcs,
		MaxCalls:      maxCalls,
		Entry:         "solve",
		Render:        sandbox.RenderText,
		DiscardOutput: true,
		LoadError:     ErrLoadDisabled,
	})
	if err == nil {
		return res.Value, nil
	}
	var se *sandbox.Error
	if !errors.As(err, &se) {
		return "", err
	}
	pe := &PlanError{Kind: "runtime", Msg: se.Msg}
	switch se.Kind {
	case sandbox.KindTimeLimit:
		pe.Kind, pe.Msg = "time limit", strings.Replace(se.Msg, "the program", "the plan", 1)
	case sandbox.KindCancelled:
		pe.Kind, pe.Msg = "cancelled", fmt.Sprintf("the run ended (%v) before the plan finished", se.Err)
	case sandbox.KindStepLimit:
		pe.Kind, pe.Msg = "step limit", fmt.Sprintf("the plan exceeded the limit of %d execution steps", lim.MaxSteps)
	case sandbox.KindCallLimit:
		pe.Kind, pe.Msg = "tool call limit", fmt.Sprintf("the plan made more than %d tool calls", lim.MaxToolCalls)
	case sandbox.KindFunc:
		pe.Kind = "tool"
		var inner *PlanError
		if errors.As(se.Err, &inner) {
			return "", inner
		}
	case sandbox.KindNoEntry:
		pe.Kind, pe.Msg = "invalid plan", "solve is not a function"
	case sandbox.KindSyntax:
		pe.Kind = "syntax"
	case sandbox.KindMemoryLimit, sandbox.KindStackLimit, sandbox.KindCPULimit, sandbox.KindOutputLimit, sandbox.KindCrash:
		pe.Kind = "sandbox " + se.Kind.String()
	}
	return "", pe
}
