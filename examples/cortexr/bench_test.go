package cortexr_test

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/examples/cortexr"
)

// BenchmarkRunOffline is one INDIA run end to end with the offline model:
// perception and decision through agent.Client, two in-process MCP calls,
// the Starlark sandbox, and memory kept in the process.
func BenchmarkRunOffline(b *testing.B) {
	a, err := cortexr.New(cortexr.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close(context.Background())
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range a.Run(context.Background(), india) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRunPlan is the sandbox alone on a small plan without tools.
func BenchmarkRunPlan(b *testing.B) {
	plan := "def solve():\n    return 'FINAL_ANSWER: ' + str(sum([i * i for i in range(100)]))\n"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cortexr.RunPlan(context.Background(), plan, nil, nil, cortexr.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
