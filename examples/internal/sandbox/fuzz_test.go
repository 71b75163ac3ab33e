package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/examples/internal/sandbox"
	"github.com/agentgraph/agentgraph/examples/internal/sandbox/sandboxtest"
)

// FuzzRun feeds programs to a pool with tight limits: whatever they do,
// the host survives, the run ends with a result or an *Error of a known
// kind, and the pool runs the next program.
func FuzzRun(f *testing.F) {
	for _, seed := range []string{
		"result = 1 + 1",
		"print([x * x for x in range(10)])",
		"def f(n):\n    return n\nresult = f(3)",
		"while True:\n    pass",
		"x = json.decode('{\"a\": [1, 2, {\"b\": null}]}')",
		"result = struct(a = 1, b = [1, 2])",
		"load('x.star', 'y')",
		"x = 1 // 0",
		"x = math.sqrt(-1)",
		"s = set([1, 2]); s.add(3); result = s",
		"result = sum(range(1 << 40))",
		"result = echo(s = 'hi', n = [1, 2.5, None, True])",
		"x = \"a\" * (1 << 40)",
		"x = {}\nfor i in range(100000):\n    x[i] = str(i)\nresult = x",
		"def (:",
	} {
		f.Add(seed)
	}
	for _, p := range sandboxtest.Hostile {
		f.Add(p.Src)
	}
	var once sync.Once
	var pool *sandbox.Pool
	f.Cleanup(func() {
		if pool != nil {
			pool.Close()
		}
	})
	funcs := map[string]sandbox.Func{"echo": func(_ context.Context, args map[string]any) (any, error) { return args, nil }}
	f.Fuzz(func(t *testing.T, src string) {
		once.Do(func() {
			var err error
			if pool, err = sandbox.NewPool(sandbox.Config{Memory: 128 << 20, CPUTime: time.Second, MaxResult: 64 << 10}); err != nil {
				t.Fatal(err)
			}
		})
		_, err := pool.Run(context.Background(), src, sandbox.Options{
			Modules: sandbox.Math | sandbox.JSON | sandbox.Struct | sandbox.Sum, Funcs: funcs,
			MaxSteps: 1_000_000, Timeout: time.Second, MaxCalls: 10, Globals: []string{"result"},
		})
		if err == nil {
			return
		}
		var se *sandbox.Error
		if !errors.As(err, &se) {
			t.Fatalf("error %T %v, want a *sandbox.Error", err, err)
		}
		if strings.HasPrefix(se.Kind.String(), "Kind(") {
			t.Fatalf("error of unknown kind: %v", se)
		}
		if se.Kind == sandbox.KindCrash {
			t.Fatalf("the worker crashed on %q: %v", src, se)
		}
		if _, err := pool.Run(context.Background(), "x = 1", sandbox.Options{}); err != nil {
			t.Fatalf("the pool does not run the next program: %v", err)
		}
	})
}
