package resilience_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/resilience"
)

// BenchmarkDo measures what a Policy adds to a call that succeeds at once.
func BenchmarkDo(b *testing.B) {
	full := resilience.LLM()
	full.Bulkhead = resilience.BulkheadConfig{MaxConcurrent: 64, MaxQueue: 64, MaxWait: time.Second}
	configs := []struct {
		name string
		cfg  resilience.Config
	}{
		{"zero", resilience.Config{}},
		{"MCP", resilience.MCP()},
		{"LLM", resilience.LLM()},
		{"LLM+bulkhead", full},
	}
	fn := func(context.Context) (int, error) { return 1, nil }
	b.Run("direct", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := fn(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range configs {
		b.Run(c.name, func(b *testing.B) {
			p, err := resilience.New[int](c.cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Do(ctx, fn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("MCP/parallel", func(b *testing.B) {
		p, err := resilience.New[int](resilience.MCP())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				if _, err := p.Do(ctx, fn); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
