// Package sandbox runs untrusted Starlark programs under one policy, shared
// by the examples that execute code written by a model or a user: the
// chatbot's calculator MCP server (run_code) and the Cortex-R agent (plans
// with a solve() function that call MCP tools).
//
// The policy: a program sees Starlark's built-ins, the [Module]s its caller
// offers, and the host functions in [Options.Funcs], nothing else. Load
// statements fail (with [Options.LoadError]), and there is no file, network,
// clock or environment access. Recursion is disabled, because the step limit
// could not stop it before it exhausted the Go stack; while loops, top-level
// statements, sets and reassigned globals are allowed. Each run is bounded
// by a step limit, a wall-clock limit, a limit on host function calls and
// its context; [Sum] counts its iterations as steps, so a sum over a huge
// range stops too. Starlark does not bound memory: run programs from
// untrusted users in a process with an OS memory limit.
//
// The package is internal to the examples: it is no part of the SDK's API.
package sandbox

import (
	"context"
	"encoding/json"
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

// ErrLoadDisabled is what a load statement fails with when
// Options.LoadError is nil.
var ErrLoadDisabled = errors.New("load is disabled: programs run in a sandbox and cannot import modules or read files")

// A Module is a set of names a program can use besides Starlark's
// built-ins. Combine them with |.
type Module uint

// The modules a run can offer.
const (
	// Math is the math module (go.starlark.net/lib/math): math.sqrt,
	// math.pi and so on.
	Math Module = 1 << iota
	// JSON is the json module: json.encode, json.decode, json.indent.
	JSON
	// Struct is the struct(**kwargs) built-in.
	Struct
	// Sum is sum(iterable, start=0), which adds the items of iterable to
	// start with + as Python's sum does, counting each item as a step.
	Sum
)

// Func is a host function offered to programs as a built-in. The program
// calls it with keyword arguments only; they reach args converted through
// JSON (a Starlark dict becomes a map[string]any, a list a []any, a number a
// float64). The value returned goes back through JSON too, except a string,
// which the program gets as it is. An error stops the program with an
// [Error] of kind [KindFunc]. ctx ends when the run does.
type Func func(ctx context.Context, args map[string]any) (any, error)

// Options configure one run. The zero value runs a program with Starlark's
// built-ins only and no limits but its context.
type Options struct {
	// Filename names the program in error messages and backtraces.
	// Empty means "code.star".
	Filename string
	// MaxSteps stops the program after this many execution steps. Zero
	// means no limit.
	MaxSteps uint64
	// Timeout stops the program after this much wall time, host function
	// calls included. Zero means no limit.
	Timeout time.Duration
	// Modules are offered to the program.
	Modules Module
	// Funcs are the host functions offered to the program, by the name it
	// calls them with. A name here hides a module's name.
	Funcs map[string]Func
	// MaxCalls bounds the calls of one run to Funcs, all together. Zero
	// means no limit.
	MaxCalls int
	// Entry names a function the program must define. Run executes the
	// program's top-level statements, then calls Entry with no arguments
	// and puts what it returns in Result.Value. Empty means only the
	// top-level statements run; read their results from Result.Globals.
	Entry string
	// MaxOutput bounds the printed output kept in Result.Output and
	// Error.Output, in bytes; the rest is dropped and Result.Truncated
	// says so. Zero keeps all of it.
	MaxOutput int
	// DiscardOutput drops what the program prints.
	DiscardOutput bool
	// LoadError is what load statements fail with. Nil means
	// ErrLoadDisabled.
	LoadError error
}

// Result is what a program produced.
type Result struct {
	// Value is what the Entry function returned; nil without Entry.
	Value starlark.Value
	// Globals are the program's global variables after its top-level
	// statements ran.
	Globals starlark.StringDict
	// Output is what the program printed, one line per print call.
	Output string
	// Truncated reports that Output was cut at Options.MaxOutput bytes.
	Truncated bool
	// Steps is the number of execution steps the program took.
	Steps uint64
}

// Kind says what stopped a program.
type Kind int

// The kinds of Error.
const (
	// KindSyntax: the program did not parse or used an undefined name.
	KindSyntax Kind = iota + 1
	// KindRuntime: the program raised an error.
	KindRuntime
	// KindLoad: the program ran a load statement.
	KindLoad
	// KindNoEntry: the program did not define Options.Entry as a function.
	KindNoEntry
	// KindFunc: a host function returned an error.
	KindFunc
	// KindCallLimit: the program called host functions more than
	// Options.MaxCalls times.
	KindCallLimit
	// KindStepLimit: the program ran Options.MaxSteps steps.
	KindStepLimit
	// KindTimeLimit: the program ran longer than Options.Timeout.
	KindTimeLimit
	// KindCancelled: the run's context ended first.
	KindCancelled
)

var kindNames = [...]string{
	KindSyntax:    "syntax",
	KindRuntime:   "runtime",
	KindLoad:      "load",
	KindNoEntry:   "no entry",
	KindFunc:      "host function",
	KindCallLimit: "call limit",
	KindStepLimit: "step limit",
	KindTimeLimit: "time limit",
	KindCancelled: "cancelled",
}

// String returns the kind's name, such as "step limit".
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error reports a program that did not run to its end.
type Error struct {
	// Kind says what stopped the program.
	Kind Kind
	// Msg explains it: the parser's message for KindSyntax, the Starlark
	// backtrace for KindRuntime and KindLoad, the host function's name
	// and error for KindFunc, and which limit for the limits.
	Msg string
	// Func names the host function of a KindFunc error.
	Func string
	// Output is what the program printed before it stopped.
	Output string
	// Steps is how many execution steps ran.
	Steps uint64
	// Err is the underlying error: the Starlark error, the host
	// function's error for KindFunc, the context's cause for
	// KindCancelled, context.DeadlineExceeded for KindTimeLimit.
	Err error
}

// Error says what stopped the program.
func (e *Error) Error() string { return "sandbox: " + e.Kind.String() + " error: " + e.Msg }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// fileOptions allow the Python-like statements people expect (while loops,
// top-level if/for, reassigning globals, sets) but not recursion.
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

var (
	errTimeLimit = errors.New("time limit")
	errStopped   = errors.New("stopped by the sandbox's limits")
)

// hostError marks a failure of a host function call, which would otherwise
// reach Run wrapped as a Starlark runtime error.
type hostError struct {
	kind Kind
	name string
	err  error
}

func (e *hostError) Error() string { return e.name + ": " + e.err.Error() }
func (e *hostError) Unwrap() error { return e.err }

// Run executes the Starlark program src under opts. It stops when ctx ends.
// A program that does not run to its end is an *Error.
func Run(ctx context.Context, src string, opts Options) (Result, error) {
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, opts.Timeout, errTimeLimit)
		defer cancel()
	}
	r := &run{ctx: ctx, opts: opts, out: boundedBuffer{max: opts.MaxOutput, discard: opts.DiscardOutput}}
	filename := opts.Filename
	if filename == "" {
		filename = "code.star"
	}
	loadErr := opts.LoadError
	if loadErr == nil {
		loadErr = ErrLoadDisabled
	}
	thread := &starlark.Thread{
		Name:  filename,
		Print: func(_ *starlark.Thread, msg string) { r.out.writeLine(msg) },
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) {
			return nil, loadErr
		},
	}
	if opts.MaxSteps > 0 {
		thread.SetMaxExecutionSteps(opts.MaxSteps)
	}
	stop := context.AfterFunc(ctx, func() { thread.Cancel(context.Cause(ctx).Error()) })
	defer stop()

	var res Result
	var err error
	res.Globals, err = starlark.ExecFileOptions(fileOptions, thread, filename, src, r.predeclared())
	if err == nil && opts.Entry != "" {
		entry, ok := res.Globals[opts.Entry].(starlark.Callable)
		if !ok {
			return Result{}, &Error{Kind: KindNoEntry, Msg: fmt.Sprintf("the program does not define a function %s()", opts.Entry),
				Output: r.out.String(), Steps: thread.ExecutionSteps()}
		}
		res.Value, err = starlark.Call(thread, entry, nil, nil)
	}
	res.Steps = thread.ExecutionSteps()
	if err != nil {
		return Result{}, r.classify(err, res.Steps, loadErr)
	}
	res.Output, res.Truncated = r.out.String(), r.out.truncated
	return res, nil
}

// run is the state of one Run.
type run struct {
	ctx   context.Context
	opts  Options
	out   boundedBuffer
	calls int
}

// classify turns the error that stopped a program into an *Error. The
// limits come first: a program stopped by one may fail in many ways.
func (r *run) classify(err error, steps uint64, loadErr error) *Error {
	e := &Error{Kind: KindRuntime, Msg: err.Error(), Output: r.out.String(), Steps: steps, Err: err}
	var he *hostError
	var evalErr *starlark.EvalError
	var syntaxErr syntax.Error
	var resolveErr resolve.ErrorList
	switch {
	case errors.Is(context.Cause(r.ctx), errTimeLimit):
		e.Kind, e.Err = KindTimeLimit, context.DeadlineExceeded
		e.Msg = fmt.Sprintf("the program ran longer than %v and was stopped after %d steps", r.opts.Timeout, steps)
	case r.ctx.Err() != nil:
		e.Kind, e.Err = KindCancelled, context.Cause(r.ctx)
		e.Msg = fmt.Sprintf("the run ended (%v) before the program finished", e.Err)
	case r.opts.MaxSteps > 0 && steps >= r.opts.MaxSteps:
		e.Kind = KindStepLimit
		e.Msg = fmt.Sprintf("the program exceeded the limit of %d execution steps", r.opts.MaxSteps)
	case errors.As(err, &he):
		e.Kind, e.Msg, e.Err = he.kind, he.err.Error(), he.err
		if he.kind == KindFunc {
			e.Msg, e.Func = he.Error(), he.name
		}
	case errors.As(err, &syntaxErr) || errors.As(err, &resolveErr):
		e.Kind = KindSyntax
	case errors.As(err, &evalErr):
		e.Msg = evalErr.Backtrace()
		if errors.Is(err, loadErr) {
			e.Kind = KindLoad
		}
	}
	return e
}

// predeclared returns the names the program sees besides the built-ins.
func (r *run) predeclared() starlark.StringDict {
	env := make(starlark.StringDict, 4+len(r.opts.Funcs))
	if r.opts.Modules&Math != 0 {
		env["math"] = math.Module
	}
	if r.opts.Modules&JSON != 0 {
		env["json"] = starlarkjson.Module
	}
	if r.opts.Modules&Struct != 0 {
		env["struct"] = starlark.NewBuiltin("struct", starlarkstruct.Make)
	}
	if r.opts.Modules&Sum != 0 {
		env["sum"] = starlark.NewBuiltin("sum", r.sum)
	}
	for name, f := range r.opts.Funcs {
		env[name] = starlark.NewBuiltin(name, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return r.call(thread, name, f, args, kwargs)
		})
	}
	return env
}

// call runs the host function f for the program.
func (r *run) call(thread *starlark.Thread, name string, f Func, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("%s: pass arguments by name, as in %s(a=1, b=2)", name, name)
	}
	r.calls++
	if r.opts.MaxCalls > 0 && r.calls > r.opts.MaxCalls {
		return nil, &hostError{kind: KindCallLimit, name: name,
			err: fmt.Errorf("the program made more than %d host function calls", r.opts.MaxCalls)}
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
	v, err := f(r.ctx, goArgs)
	if err != nil {
		return nil, &hostError{kind: KindFunc, name: name, err: err}
	}
	return toStarlark(thread, v)
}

// sum(iterable, start=0) adds the items of iterable to start with +. Each
// item counts as an execution step, so the step limit and cancellation,
// which the interpreter checks only between its own instructions, reach a
// sum over a huge range.
func (r *run) sum(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
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
		if (r.opts.MaxSteps > 0 && thread.Steps >= r.opts.MaxSteps) || (thread.Steps%1024 == 0 && r.ctx.Err() != nil) {
			return nil, errStopped
		}
		var err error
		if acc, err = starlark.Binary(syntax.PLUS, acc, x); err != nil {
			return nil, fmt.Errorf("sum: %w", err)
		}
	}
	return acc, nil
}

// fromStarlark converts a Starlark value to Go through JSON.
func fromStarlark(thread *starlark.Thread, v starlark.Value, out any) error {
	s, err := starlark.Call(thread, starlarkjson.Module.Members["encode"], starlark.Tuple{v}, nil)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(s.(starlark.String)), out)
}

// toStarlark converts a Go value to Starlark through JSON; a string stays
// as it is.
func toStarlark(thread *starlark.Thread, v any) (starlark.Value, error) {
	if s, ok := v.(string); ok {
		return starlark.String(s), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return starlark.Call(thread, starlarkjson.Module.Members["decode"], starlark.Tuple{starlark.String(b)}, nil)
}

// boundedBuffer keeps at most max bytes of output (all of it when max is
// zero), or none when discard is set.
type boundedBuffer struct {
	b         strings.Builder
	max       int
	discard   bool
	truncated bool
}

func (w *boundedBuffer) writeLine(s string) {
	if w.truncated || w.discard {
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
