package calculator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentgraph/agentgraph/examples/internal/sandbox"
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
	// Kind is "syntax", "runtime", "step limit", "time limit", "cancelled",
	// or, when the program's worker process was stopped, "sandbox memory
	// limit", "sandbox stack limit", "sandbox cpu limit", "sandbox output
	// limit" or "sandbox crash".
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
var ErrLoadDisabled = sandbox.ErrLoadDisabled

// Run executes a Starlark program in a sandbox under the given limits. It
// stops when ctx is cancelled. The program runs in a worker process of the
// sandbox's shared pool, under its memory, stack, CPU and output limits: a
// program that exhausts one fails with a RunError whose Kind names it, and
// the calling process carries on.
//
// Programs see Starlark's built-ins, the math, json and struct modules and
// a Python-like sum; the policy is that of the examples' sandbox package
// (see the package documentation).
func Run(ctx context.Context, code string, lim Limits) (*RunResult, error) {
	res, err := sandbox.Run(ctx, code, sandbox.Options{
		Filename:  "code.star",
		MaxSteps:  lim.MaxSteps,
		Timeout:   lim.Timeout,
		MaxOutput: lim.MaxOutput,
		Modules:   sandbox.Math | sandbox.JSON | sandbox.Struct | sandbox.Sum,
		Globals:   []string{"result"},
	})
	if err != nil {
		var se *sandbox.Error
		if !errors.As(err, &se) {
			return nil, err
		}
		re := &RunError{Kind: "runtime", Msg: se.Msg, Output: se.Output, Steps: se.Steps}
		switch se.Kind {
		case sandbox.KindTimeLimit:
			re.Kind, re.Msg = "time limit", se.Msg+"; make it do less work"
		case sandbox.KindCancelled:
			re.Kind, re.Msg = "cancelled", fmt.Sprintf("the call ended (%v) before the program finished", se.Err)
		case sandbox.KindStepLimit:
			re.Kind, re.Msg = "step limit", fmt.Sprintf("the program exceeded the limit of %d execution steps; reduce loop counts or simplify it", lim.MaxSteps)
		case sandbox.KindSyntax:
			re.Kind = "syntax"
		case sandbox.KindMemoryLimit, sandbox.KindStackLimit, sandbox.KindCPULimit, sandbox.KindOutputLimit, sandbox.KindCrash:
			re.Kind = "sandbox " + se.Kind.String()
		}
		return nil, re
	}
	out := &RunResult{Output: res.Output, Truncated: res.Truncated, Steps: res.Steps}
	out.Result = res.Globals["result"]
	return out, nil
}
