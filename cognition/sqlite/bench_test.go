package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/cognition/sqlite"
	"github.com/agentgraph/agentgraph/memory"
)

// BenchmarkContext measures Service.Context over a user with 100 episodes
// in an SQLite file: three reads, BM25 ranking and rendering (the access
// update runs on the background queue, outside the measured call).
func BenchmarkContext(b *testing.B) {
	ctx := context.Background()
	store, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(b.TempDir(), "bench.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	n := 0
	learner := cognition.LearnerFunc(func(context.Context, cognition.LearnInput) (cognition.Learning, error) {
		n++
		return cognition.Learning{Episodes: []cognition.EpisodeDraft{{
			Summary: fmt.Sprintf("episode %d about postgres tuning number %d on host %d", n, n*7919, n%13), Importance: 0.5,
		}}}, nil
	})
	s, err := cognition.New(cognition.Config{Store: store, Learner: learner, Retention: cognition.Retention{DedupThreshold: 0.99}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	for range 100 {
		err := s.Learn(ctx, cognition.Interaction{UserID: "u1", Messages: []memory.Message{{Role: memory.RoleUser, Content: "x"}}})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Context(ctx, "u1", "postgres tuning"); err != nil {
			b.Fatal(err)
		}
	}
}
