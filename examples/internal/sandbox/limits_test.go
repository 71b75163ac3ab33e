package sandbox_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/examples/internal/sandbox"
	"github.com/agentgraph/agentgraph/examples/internal/sandbox/sandboxtest"
)

// newPool returns a pool closed when the test ends.
func newPool(t testing.TB, cfg sandbox.Config) *sandbox.Pool {
	t.Helper()
	p, err := sandbox.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// poolErr runs src on p and returns its *sandbox.Error.
func poolErr(t *testing.T, p *sandbox.Pool, src string, opts sandbox.Options) *sandbox.Error {
	t.Helper()
	res, err := p.Run(context.Background(), src, opts)
	var se *sandbox.Error
	if !errors.As(err, &se) {
		t.Fatalf("Run = %+v, %v; want a *sandbox.Error", res, err)
	}
	return se
}

// stillRuns checks that p runs a program after whatever came before.
func stillRuns(t *testing.T, p *sandbox.Pool) {
	t.Helper()
	res, err := p.Run(context.Background(), "result = 6 * 7", sandbox.Options{Globals: []string{"result"}})
	if err != nil || res.Globals["result"] != "42" {
		t.Fatalf("the next run: %+v, %v; want result 42", res, err)
	}
}

// Every program that brought down its host stops at a limit in its
// worker; the host carries on with its heap where it was, and the next run
// gets a fresh worker.
func TestHostilePrograms(t *testing.T) {
	p := newPool(t, sandbox.Config{})
	stillRuns(t, p)
	before := sandboxtest.HeapAlloc()
	for _, prog := range sandboxtest.Hostile {
		t.Run(prog.Name, func(t *testing.T) {
			se := poolErr(t, p, prog.Src, sandbox.Options{Modules: sandbox.JSON, Timeout: 3 * time.Second, MaxSteps: 1 << 40, Globals: []string{"result"}})
			if !prog.Wants(se.Kind) {
				t.Errorf("error %v (kind %v), want one of %v", se, se.Kind, prog.Kinds)
			}
			if !strings.HasPrefix(se.Error(), "sandbox: "+se.Kind.String()+" error: ") || !strings.Contains(se.Msg, "stopped") {
				t.Errorf("Error() = %q", se.Error())
			}
			stillRuns(t, p)
		})
	}
	if after := sandboxtest.HeapAlloc(); after > before+16<<20 {
		t.Errorf("host heap grew from %d to %d bytes", before, after)
	}
}

func TestCPULimit(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_CPU is applied on Linux only")
	}
	p := newPool(t, sandbox.Config{CPUTime: time.Second})
	// No step or time limit: only the CPU time limit stops it.
	se := poolErr(t, p, "while True:\n    pass\n", sandbox.Options{})
	if se.Kind != sandbox.KindCPULimit || !strings.Contains(se.Msg, "more than 1s of CPU time") {
		t.Errorf("error %v (kind %v), want a cpu limit", se, se.Kind)
	}
	stillRuns(t, p)
}

func TestOutputLimit(t *testing.T) {
	t.Parallel()
	p := newPool(t, sandbox.Config{MaxResult: 1 << 10})
	se := poolErr(t, p, `result = "a" * 5000`, sandbox.Options{Globals: []string{"result"}})
	if se.Kind != sandbox.KindOutputLimit || !strings.Contains(se.Msg, "more than the limit of 1024") {
		t.Errorf("large result: %v (kind %v), want an output limit", se, se.Kind)
	}
	se = poolErr(t, p, `def solve():
    return "a" * 5000
`, sandbox.Options{Entry: "solve"})
	if se.Kind != sandbox.KindOutputLimit {
		t.Errorf("large value: %v (kind %v), want an output limit", se, se.Kind)
	}
	echo := map[string]sandbox.Func{"echo": func(_ context.Context, args map[string]any) (any, error) { return args, nil }}
	se = poolErr(t, p, `echo(s = "a" * 5000)`, sandbox.Options{Funcs: echo})
	if se.Kind != sandbox.KindRuntime || !strings.Contains(se.Msg, "arguments come to 5008 bytes, more than the limit of 1024") {
		t.Errorf("large arguments: %v (kind %v), want a runtime error naming the limit", se, se.Kind)
	}
	// Output without its own bound is cut at the pool's.
	res, err := p.Run(context.Background(), "for i in range(1000):\n    print('line', i)\n", sandbox.Options{})
	if err != nil || len(res.Output) != 1<<10 || !res.Truncated {
		t.Errorf("unbounded output: %d bytes, truncated %v, %v; want 1024 bytes, truncated", len(res.Output), res.Truncated, err)
	}
	stillRuns(t, p)
}

func TestNewPoolValidates(t *testing.T) {
	t.Parallel()
	_, err := sandbox.NewPool(sandbox.Config{Memory: -1})
	if err == nil || !strings.Contains(err.Error(), "Config.Memory is negative") {
		t.Errorf("NewPool with negative Memory: %v", err)
	}
}

func TestNotAWorker(t *testing.T) {
	t.Parallel()
	p := newPool(t, sandbox.Config{Executable: "/bin/true"})
	se := poolErr(t, p, "x = 1", sandbox.Options{})
	if se.Kind != sandbox.KindCrash || !strings.Contains(se.Msg, "did not start as a worker (it must import package sandbox)") {
		t.Errorf("error %v (kind %v), want a crash naming the executable", se, se.Kind)
	}
}

func TestRunAfterClose(t *testing.T) {
	t.Parallel()
	p := newPool(t, sandbox.Config{})
	stillRuns(t, p)
	p.Close()
	if _, err := p.Run(context.Background(), "x = 1", sandbox.Options{}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Run after Close: %v", err)
	}
}
