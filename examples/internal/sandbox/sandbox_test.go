package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentgraph/agentgraph/examples/internal/sandbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const all = sandbox.Math | sandbox.JSON | sandbox.Struct | sandbox.Sum

// runErr runs src and returns its *sandbox.Error, failing the test when
// the program succeeds or fails some other way.
func runErr(t *testing.T, ctx context.Context, src string, opts sandbox.Options) *sandbox.Error {
	t.Helper()
	res, err := sandbox.Run(ctx, src, opts)
	var se *sandbox.Error
	if !errors.As(err, &se) {
		t.Fatalf("Run = %+v, %v; want a *sandbox.Error", res, err)
	}
	return se
}

func TestRunResults(t *testing.T) {
	t.Parallel()
	res, err := sandbox.Run(context.Background(), `
print("sqrt", math.sqrt(16))
s = struct(x = 1)
result = json.encode({"sum": sum([1, 2, 3], 10), "x": s.x})
`, sandbox.Options{Modules: all, MaxSteps: 10_000, Globals: []string{"result", "undefined"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Globals["result"]; got != `"{\"sum\":16,\"x\":1}"` || len(res.Globals) != 1 {
		t.Errorf("result = %s", got)
	}
	if res.Output != "sqrt 4.0\n" || res.Truncated || res.Steps == 0 || res.Value != "" {
		t.Errorf("result %+v", res)
	}

	res, err = sandbox.Run(context.Background(), "x = 2\ndef solve():\n    return x * 21\n", sandbox.Options{Entry: "solve"})
	if err != nil || res.Value != "42" {
		t.Errorf("entry: %v, %v; want 42", res.Value, err)
	}
}

func TestRunFailures(t *testing.T) {
	t.Parallel()
	loop := "while True:\n    pass\n"
	for _, tc := range []struct {
		name, src string
		opts      sandbox.Options
		kind      sandbox.Kind
		msg       string // in Error.Msg
	}{
		{name: "syntax", src: "def (:\n", kind: sandbox.KindSyntax, msg: "code.star:1"},
		{name: "runtime", src: "print('hi')\nx = 1 // 0\n", kind: sandbox.KindRuntime, msg: "code.star:2"},
		{name: "runtime, named file", src: "x = 1 // 0\n", opts: sandbox.Options{Filename: "plan.star"}, kind: sandbox.KindRuntime, msg: "plan.star:1"},
		{name: "recursion refused", src: "def f(n):\n    return f(n)\nf(1)\n", kind: sandbox.KindRuntime, msg: "called recursively"},
		{name: "load refused", src: "load('os.star', 'system')\n", kind: sandbox.KindLoad, msg: sandbox.ErrLoadDisabled.Error()},
		{name: "load refused, own error", src: "load('os.star', 'system')\n", opts: sandbox.Options{LoadError: errors.New("no loading here")},
			kind: sandbox.KindLoad, msg: "no loading here"},
		{name: "step limit", src: loop, opts: sandbox.Options{MaxSteps: 1000}, kind: sandbox.KindStepLimit, msg: "limit of 1000 execution steps"},
		{name: "sum counts steps", src: "x = sum(range(1 << 40))", opts: sandbox.Options{Modules: sandbox.Sum, MaxSteps: 1000, Timeout: time.Minute}, kind: sandbox.KindStepLimit},
		{name: "time limit", src: loop, opts: sandbox.Options{Timeout: 20 * time.Millisecond}, kind: sandbox.KindTimeLimit, msg: "longer than 20ms"},
		{name: "sum stops at the time limit", src: "x = sum(range(1 << 50))", opts: sandbox.Options{Modules: sandbox.Sum, Timeout: 20 * time.Millisecond}, kind: sandbox.KindTimeLimit},
		{name: "no entry", src: "x = 1", opts: sandbox.Options{Entry: "solve"}, kind: sandbox.KindNoEntry, msg: "solve()"},
		{name: "entry not a function", src: "solve = 1", opts: sandbox.Options{Entry: "solve"}, kind: sandbox.KindNoEntry},
		{name: "entry fails", src: "def solve():\n    return 1 // 0\n", opts: sandbox.Options{Entry: "solve"}, kind: sandbox.KindRuntime, msg: "division by zero"},
		{name: "modules only when offered", src: "x = math.sqrt(4)", kind: sandbox.KindSyntax, msg: "undefined: math"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			se := runErr(t, context.Background(), tc.src, tc.opts)
			if se.Kind != tc.kind || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("error %v (kind %v), want kind %v with %q", se, se.Kind, tc.kind, tc.msg)
			}
			if !strings.HasPrefix(se.Error(), "sandbox: "+tc.kind.String()+" error: ") {
				t.Errorf("Error() = %q", se.Error())
			}
		})
	}
}

func TestRunLimitErrorsUnwrap(t *testing.T) {
	t.Parallel()
	se := runErr(t, context.Background(), "load('x.star', 'y')", sandbox.Options{})
	if !errors.Is(se, sandbox.ErrLoadDisabled) {
		t.Errorf("load error %v does not wrap ErrLoadDisabled", se)
	}
	se = runErr(t, context.Background(), "while True:\n    pass\n", sandbox.Options{Timeout: 10 * time.Millisecond})
	if !errors.Is(se, context.DeadlineExceeded) {
		t.Errorf("time limit error %v does not wrap context.DeadlineExceeded", se)
	}
}

// Nothing outside the program reaches it: no files, network, clock,
// environment or import, whatever modules are offered.
func TestRunNoHostAccess(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"open", "exec", "eval", "__import__", "os", "socket", "http", "time", "getenv", "input", "compile"} {
		se := runErr(t, context.Background(), "x = "+name, sandbox.Options{Modules: all})
		if se.Kind != sandbox.KindSyntax || !strings.Contains(se.Msg, "undefined: "+name) {
			t.Errorf("%s: error %v, want it undefined", name, se)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"while True:\n    pass\n", "x = sum(range(1 << 50))"} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		se := runErr(t, ctx, src, sandbox.Options{Modules: sandbox.Sum, Timeout: time.Minute})
		if se.Kind != sandbox.KindCancelled || !errors.Is(se, context.Canceled) {
			t.Errorf("%q: error %v (kind %v), want cancelled wrapping context.Canceled", src, se, se.Kind)
		}
		cancel()
	}
}

func TestRunOutput(t *testing.T) {
	t.Parallel()
	prog := "print('abcdefgh')\nprint('ijklmnop')\n"
	res, err := sandbox.Run(context.Background(), prog, sandbox.Options{MaxOutput: 12})
	if err != nil || res.Output != "abcdefgh\nijk" || !res.Truncated {
		t.Errorf("MaxOutput 12: %q truncated=%v, %v", res.Output, res.Truncated, err)
	}
	res, err = sandbox.Run(context.Background(), prog, sandbox.Options{})
	if err != nil || res.Output != "abcdefgh\nijklmnop\n" || res.Truncated {
		t.Errorf("no MaxOutput: %q truncated=%v, %v", res.Output, res.Truncated, err)
	}
	res, err = sandbox.Run(context.Background(), prog, sandbox.Options{DiscardOutput: true})
	if err != nil || res.Output != "" {
		t.Errorf("DiscardOutput: %q, %v", res.Output, err)
	}
	se := runErr(t, context.Background(), "print('before')\nx = 1 // 0\n", sandbox.Options{})
	if se.Output != "before\n" {
		t.Errorf("output before the error = %q", se.Output)
	}
}

func TestFuncs(t *testing.T) {
	t.Parallel()
	var got map[string]any
	var calls atomic.Int32
	hostErr := errors.New("server said no")
	funcs := map[string]sandbox.Func{
		"echo": func(_ context.Context, args map[string]any) (any, error) {
			calls.Add(1)
			got = args
			return map[string]any{"n": 2, "list": []string{"a", "b"}}, nil
		},
		"shout": func(_ context.Context, args map[string]any) (any, error) {
			return strings.ToUpper(args["s"].(string)), nil
		},
		"broken": func(context.Context, map[string]any) (any, error) { return nil, hostErr },
		"block": func(ctx context.Context, _ map[string]any) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}

	res, err := sandbox.Run(context.Background(), `
r = echo(x=[1, 2], s="hi", d={"k": True}, none=None)
result = [r["n"] + 1, r["list"][1], shout(s="hi")]
`, sandbox.Options{Funcs: funcs, Globals: []string{"result"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"x": []any{1.0, 2.0}, "s": "hi", "d": map[string]any{"k": true}, "none": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("host function arguments (-want +got):\n%s", diff)
	}
	if r := res.Globals["result"]; r != `[3, "b", "HI"]` {
		t.Errorf("result = %s", r)
	}

	se := runErr(t, context.Background(), "echo(1)", sandbox.Options{Funcs: funcs})
	if se.Kind != sandbox.KindRuntime || !strings.Contains(se.Msg, "pass arguments by name, as in echo(a=1, b=2)") {
		t.Errorf("positional arguments: %v", se)
	}

	se = runErr(t, context.Background(), "broken(a=1)", sandbox.Options{Funcs: funcs})
	if se.Kind != sandbox.KindFunc || se.Func != "broken" || se.Msg != "broken: server said no" || !errors.Is(se, hostErr) {
		t.Errorf("failing host function: %+v", se)
	}

	calls.Store(0)
	se = runErr(t, context.Background(), "for i in range(10):\n    echo(i=i)\n", sandbox.Options{Funcs: funcs, MaxCalls: 3})
	if se.Kind != sandbox.KindCallLimit || !strings.Contains(se.Msg, "more than 3 host function calls") || calls.Load() != 3 {
		t.Errorf("call limit: %v after %d calls", se, calls.Load())
	}

	// A host call counts against the time limit: its context ends with the run.
	se = runErr(t, context.Background(), "block()", sandbox.Options{Funcs: funcs, Timeout: 20 * time.Millisecond})
	if se.Kind != sandbox.KindTimeLimit {
		t.Errorf("blocking host function: %v, want a time limit", se)
	}
}

func TestKindString(t *testing.T) {
	t.Parallel()
	if got := sandbox.KindStepLimit.String(); got != "step limit" {
		t.Errorf("KindStepLimit = %q", got)
	}
	if got := sandbox.Kind(99).String(); got != "Kind(99)" {
		t.Errorf("Kind(99) = %q", got)
	}
}

// Offer a host function and call the program's solve().
func ExampleRun() {
	res, err := sandbox.Run(context.Background(), `
def solve():
    return "total: %d" % sum([price(item="tea"), price(item="cake")])
`, sandbox.Options{
		Modules:  sandbox.Sum,
		MaxSteps: 10_000,
		Timeout:  time.Second,
		Entry:    "solve",
		Funcs: map[string]sandbox.Func{
			"price": func(_ context.Context, args map[string]any) (any, error) {
				return map[string]int{"tea": 3, "cake": 4}[args["item"].(string)], nil
			},
		},
	})
	fmt.Println(res.Value, err)

	_, err = sandbox.Run(context.Background(), "while True:\n    pass", sandbox.Options{MaxSteps: 1000})
	fmt.Println(err)
	// Output:
	// "total: 7" <nil>
	// sandbox: step limit error: the program exceeded the limit of 1000 execution steps
}

// A host function that ignores its context does not hold the run past its
// time limit or cancellation: the run ends, its worker is stopped, and the
// function is left to return on its own.
func TestFuncIgnoresContext(t *testing.T) {
	t.Parallel()
	// run runs stuck() with timeout under ctx, cancelling it once stuck is
	// called if cancel is set. It reports the run's error and whether
	// stuck was called: the abandon path is exercised only then.
	run := func(t *testing.T, timeout time.Duration, cancelOnCall bool) (called bool, err error) {
		release, calledc := make(chan struct{}), make(chan struct{})
		defer close(release)
		funcs := map[string]sandbox.Func{"stuck": func(context.Context, map[string]any) (any, error) {
			close(calledc)
			<-release // like a read of a FIFO nobody writes
			return nil, nil
		}}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			_, err := sandbox.Run(ctx, "stuck()", sandbox.Options{Funcs: funcs, Timeout: timeout})
			errc <- err
		}()
		// Bounded, so that a regression fails rather than hangs.
		guard, stop := context.WithTimeout(context.Background(), 2*time.Minute)
		defer stop()
		if cancelOnCall {
			select {
			case <-calledc:
				cancel()
			case err := <-errc:
				t.Fatalf("Run = %v before the host function was called", err)
			case <-guard.Done():
				t.Fatal("the host function was never called")
			}
		}
		select {
		case err := <-errc:
			select {
			case <-calledc:
				return true, err
			default:
				return false, err
			}
		case <-guard.Done():
			t.Fatal("the run waited for a host function that ignores its context")
		}
		return false, nil
	}
	check := func(t *testing.T, err error, want sandbox.Kind) {
		t.Helper()
		var se *sandbox.Error
		if !errors.As(err, &se) || se.Kind != want {
			t.Fatalf("Run = %v, want a %v error", err, want)
		}
	}
	t.Run("time limit", func(t *testing.T) {
		t.Parallel()
		// The worker's own timer may stop the program before it calls
		// stuck() on a loaded machine; then the time limit is doubled, so
		// that the pass condition does not depend on speed.
		for timeout := 50 * time.Millisecond; ; timeout *= 2 {
			called, err := run(t, timeout, false)
			check(t, err, sandbox.KindTimeLimit)
			if called {
				return
			}
			if timeout > time.Minute {
				t.Fatal("stuck() was never called before the time limit")
			}
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		called, err := run(t, 0, true)
		check(t, err, sandbox.KindCancelled)
		if !called {
			t.Fatal("stuck() was not called")
		}
	})
}

// Abandoned host function calls are logged and counted until they
// return; past Config.MaxAbandoned, runs with host functions fail at once
// and runs without go on.
func TestAbandonedCalls(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.WarnLevel)
	p, err := sandbox.NewPool(sandbox.Config{MaxAbandoned: 1, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	release, called := make(chan struct{}), make(chan struct{})
	funcs := map[string]sandbox.Func{"stuck": func(context.Context, map[string]any) (any, error) {
		close(called)
		<-release
		return nil, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := p.Run(ctx, "stuck()", sandbox.Options{Funcs: funcs})
		errc <- err
	}()
	<-called // the function runs until release, so Run cannot end first
	cancel()
	if err := <-errc; err == nil {
		close(release)
		t.Fatal("the cancelled run succeeded")
	}
	if n := p.Abandoned(); n != 1 {
		t.Errorf("Abandoned() = %d, want 1", n)
	}
	if es := logs.FilterMessageSnippet("abandoned").All(); len(es) != 1 || es[0].ContextMap()["func"] != "stuck" {
		t.Errorf("warnings %+v, want one naming stuck", logs.All())
	}
	noop := map[string]sandbox.Func{"noop": func(context.Context, map[string]any) (any, error) { return nil, nil }}
	if _, err := p.Run(context.Background(), "noop()", sandbox.Options{Funcs: noop}); !errors.Is(err, sandbox.ErrTooManyAbandoned) {
		t.Errorf("a run with functions past the cap = %v, want ErrTooManyAbandoned", err)
	}
	if res, err := p.Run(context.Background(), "x = 1", sandbox.Options{Globals: []string{"x"}}); err != nil || res.Globals["x"] != "1" {
		t.Errorf("a run without functions past the cap = %v, %v", res.Globals, err)
	}

	close(release)
	// Bounded, so that a regression fails rather than hangs.
	guard, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	for p.Abandoned() != 0 {
		select {
		case <-guard.Done():
			t.Fatalf("Abandoned() = %d after the function returned", p.Abandoned())
		case <-time.After(time.Millisecond): // waits for the count, whatever its speed
		}
	}
	if _, err := p.Run(context.Background(), "noop()", sandbox.Options{Funcs: noop}); err != nil {
		t.Errorf("a run with functions once the abandoned call returned: %v", err)
	}
}
