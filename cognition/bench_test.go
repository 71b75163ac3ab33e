package cognition_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
)

// fill learns n distinct episodes for user through the service.
func fill(b *testing.B, s *cognition.Service, user string, n int) {
	b.Helper()
	topics := []string{"postgres", "kubernetes", "golang", "terraform", "react", "kafka", "redis", "grpc"}
	for i := range n {
		q := fmt.Sprintf("episode %d about %s and %s with detail %d", i, topics[i%len(topics)], topics[(i*3+1)%len(topics)], i*7919)
		if err := s.Learn(context.Background(), interaction(user, q)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkContext measures the read path over a user with 100 stored
// episodes (the default cap) in the in-memory store: load, rank with BM25,
// render.
func BenchmarkContext(b *testing.B) {
	s, err := cognition.New(cognition.Config{Learner: &echoLearner{}, Retention: cognition.Retention{DedupThreshold: 0.99}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	fill(b, s, "u1", 100)
	ctx := context.Background()
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		cc, err := s.Context(ctx, "u1", "how do I tune postgres on kubernetes?")
		if err != nil {
			b.Fatal(err)
		}
		_ = cc.Render()
	}
	reportCPU(b, start)
}

// BenchmarkLearnStep measures one learning step without a model (the
// learner returns at once): profile update, dedup against 100 episodes,
// pruning, identity update.
func BenchmarkLearnStep(b *testing.B) {
	s, err := cognition.New(cognition.Config{Learner: &echoLearner{}, Retention: cognition.Retention{DedupThreshold: 0.99}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	fill(b, s, "u1", 100)
	in := interaction("u1", "a new question about grpc streaming deadlines")
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if err := s.Learn(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// reportCPU reports the process CPU time per operation since start, which
// a loaded machine inflates less than wall time. It includes the
// background access updates of Context, which are part of its cost.
func reportCPU(b *testing.B, start time.Duration) {
	if used := cpuTime() - start; used > 0 && b.N > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
