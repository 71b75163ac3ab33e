package sandbox

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

// This file is the interpreter side: it runs inside a worker process.

// fileOptions allow the Python-like statements people expect (while loops,
// top-level if/for, reassigning globals, sets) but not recursion.
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

var (
	errTimeLimit = errors.New("time limit")
	errStopped   = errors.New("stopped by the sandbox's limits")
)

// hostError marks a failure of a host function call, which would otherwise
// reach execute wrapped as a Starlark runtime error.
type hostError struct {
	kind Kind
	name string
	err  error
}

func (e *hostError) Error() string { return e.name + ": " + e.err.Error() }
func (e *hostError) Unwrap() error { return e.err }

// hostCaller calls the host function name with its arguments encoded as a
// JSON object and returns the value for the program.
type hostCaller func(name string, args []byte) (starlark.Value, error)

// execute runs src under o in this process and renders what it produced.
func execute(ctx context.Context, src string, o *wireOptions, call hostCaller) (*wireResult, *wireError) {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, time.Duration(o.Timeout), errTimeLimit)
		defer cancel()
	}
	r := &run{ctx: ctx, opts: o, call: call, out: boundedBuffer{max: o.MaxOutput, discard: o.DiscardOutput},
		loadErr: errors.New(o.LoadError)}
	thread := &starlark.Thread{
		Name:  o.Filename,
		Print: func(_ *starlark.Thread, msg string) { r.out.writeLine(msg) },
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) {
			return nil, r.loadErr
		},
	}
	if o.MaxSteps > 0 {
		thread.SetMaxExecutionSteps(o.MaxSteps)
	}
	stop := context.AfterFunc(ctx, func() { thread.Cancel(context.Cause(ctx).Error()) })
	defer stop()

	globals, err := starlark.ExecFileOptions(fileOptions, thread, o.Filename, src, r.predeclared())
	var value starlark.Value
	if err == nil && o.Entry != "" {
		entry, ok := globals[o.Entry].(starlark.Callable)
		if !ok {
			return nil, &wireError{Kind: KindNoEntry, Msg: fmt.Sprintf("the program does not define a function %s()", o.Entry),
				Output: r.out.String(), Steps: thread.ExecutionSteps()}
		}
		value, err = starlark.Call(thread, entry, nil, nil)
	}
	steps := thread.ExecutionSteps()
	if err != nil {
		return nil, r.classify(err, steps)
	}
	// Rendering runs here, inside the worker's limits: the String of a
	// deeply nested value can take longer than the program did.
	res := &wireResult{Output: r.out.String(), Truncated: r.out.truncated, Steps: steps}
	size := len(res.Output)
	if value != nil {
		res.Value = render(value, o.Render)
		size += len(res.Value)
	}
	for _, name := range o.Globals {
		if v, ok := globals[name]; ok {
			if res.Globals == nil {
				res.Globals = make(map[string]string, len(o.Globals))
			}
			s := v.String()
			res.Globals[name] = s
			size += len(s)
		}
	}
	if o.MaxResult > 0 && size > o.MaxResult {
		return nil, &wireError{Kind: KindOutputLimit, Steps: steps,
			Msg: fmt.Sprintf("the program's result and output come to %d bytes, more than the limit of %d", size, o.MaxResult)}
	}
	return res, nil
}

// render renders a value the way r says.
func render(v starlark.Value, r Render) string {
	if r != RenderText {
		return v.String()
	}
	switch v := v.(type) {
	case starlark.String:
		return string(v)
	case *starlark.Dict:
		if x, ok, _ := v.Get(starlark.String("result")); ok {
			return render(x, r)
		}
	case *starlark.List:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = render(v.Index(i), r)
		}
		return strings.Join(parts, " ")
	}
	return v.String()
}

// run is the state of one execute.
type run struct {
	ctx     context.Context
	opts    *wireOptions
	call    hostCaller
	out     boundedBuffer
	calls   int
	loadErr error
}

// classify turns the error that stopped a program into a wireError. The
// limits come first: a program stopped by one may fail in many ways.
func (r *run) classify(err error, steps uint64) *wireError {
	e := &wireError{Kind: KindRuntime, Msg: err.Error(), Output: r.out.String(), Steps: steps}
	var he *hostError
	var evalErr *starlark.EvalError
	var syntaxErr syntax.Error
	var resolveErr resolve.ErrorList
	switch {
	case errors.Is(context.Cause(r.ctx), errTimeLimit):
		e.Kind = KindTimeLimit
		e.Msg = fmt.Sprintf("the program ran longer than %v and was stopped after %d steps", time.Duration(r.opts.Timeout), steps)
	case r.opts.MaxSteps > 0 && steps >= r.opts.MaxSteps:
		e.Kind = KindStepLimit
		e.Msg = fmt.Sprintf("the program exceeded the limit of %d execution steps", r.opts.MaxSteps)
	case errors.As(err, &he):
		e.Kind, e.Msg = he.kind, he.err.Error()
		if he.kind == KindFunc {
			e.Msg, e.Func = he.Error(), he.name
		}
	case errors.As(err, &syntaxErr) || errors.As(err, &resolveErr):
		e.Kind = KindSyntax
	case errors.As(err, &evalErr):
		e.Msg = evalErr.Backtrace()
		if errors.Is(err, r.loadErr) {
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
	if r.opts.Modules&Regexp != 0 {
		env["re"] = r.regexpModule()
	}
	if r.opts.Modules&Sum != 0 {
		env["sum"] = starlark.NewBuiltin("sum", r.sum)
	}
	for _, name := range r.opts.Funcs {
		env[name] = starlark.NewBuiltin(name, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return r.callHost(thread, name, args, kwargs)
		})
	}
	return env
}

// callHost calls the host function name for the program.
func (r *run) callHost(thread *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
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
	enc, err := starlark.Call(thread, starlarkjson.Module.Members["encode"], starlark.Tuple{in}, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return r.call(name, []byte(enc.(starlark.String)))
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

// fromJSON decodes JSON into a Starlark value.
func fromJSON(b []byte) (starlark.Value, error) {
	thread := &starlark.Thread{Name: "decode"}
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
