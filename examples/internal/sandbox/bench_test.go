package sandbox_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/examples/internal/sandbox"
)

// benchRun runs src b.N times on p and reports the latency percentiles of
// one run, in milliseconds.
func benchRun(b *testing.B, p *sandbox.Pool, src string, opts sandbox.Options) {
	b.Helper()
	ctx := context.Background()
	if _, err := p.Run(ctx, src, opts); err != nil { // start a worker
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if _, err := p.Run(ctx, src, opts); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkRun is the overhead of one run in a worker: a trivial program
// on a warm worker, result rendered.
func BenchmarkRun(b *testing.B) {
	p := newPool(b, sandbox.Config{})
	benchRun(b, p, "result = 6 * 7", sandbox.Options{Globals: []string{"result"}, MaxSteps: 1000, Timeout: time.Second})
}

// BenchmarkRunHostFunc adds one host function call, a round trip from the
// worker to the host and back.
func BenchmarkRunHostFunc(b *testing.B) {
	p := newPool(b, sandbox.Config{})
	funcs := map[string]sandbox.Func{"add": func(_ context.Context, args map[string]any) (any, error) {
		return args["a"].(float64) + args["b"].(float64), nil
	}}
	benchRun(b, p, "def solve():\n    return add(a = 1, b = 2)\n", sandbox.Options{Entry: "solve", Funcs: funcs, MaxSteps: 1000, Timeout: time.Second})
}

// BenchmarkRunFreshWorker is a run on a worker started for it, the cost
// of the run after a worker died.
func BenchmarkRunFreshWorker(b *testing.B) {
	p := newPool(b, sandbox.Config{MaxRuns: 1})
	benchRun(b, p, "result = 6 * 7", sandbox.Options{Globals: []string{"result"}, MaxSteps: 1000, Timeout: time.Second})
}
