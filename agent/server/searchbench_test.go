package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// BenchmarkMemoryStoreSearchMetadata: a metadata filter over 1000 threads
// of the memory store (a comparison of JSON values per thread and key).
func BenchmarkMemoryStoreSearchMetadata(b *testing.B) {
	st := server.NewMemoryStore()
	ctx := context.Background()
	now := time.Now()
	for i := range 1000 {
		t := &server.Thread{ID: fmt.Sprintf("t%04d", i), Owner: "o", CreatedAt: now, UpdatedAt: now, Status: server.ThreadIdle,
			Metadata: map[string]any{"user": fmt.Sprintf("u%d", i%10), "n": float64(i), "tags": []any{"a", "b"}}}
		if err := st.CreateThread(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	q := server.ThreadQuery{Owner: "o", Metadata: map[string]any{"user": "u3", "n": float64(503)}, Limit: 10}
	b.ReportAllocs()
	for b.Loop() {
		ts, _, err := st.SearchThreads(ctx, q)
		if err != nil || len(ts) != 1 {
			b.Fatal(err, len(ts))
		}
	}
}

// BenchmarkSQLiteThreadCount: the count of a principal's 10,000 threads
// that each thread creation makes (Config.MaxThreads): "count" is
// OwnerCounter's count in SQL, "search" the SearchThreads the server made
// before (reading and decoding every thread of the principal).
func BenchmarkSQLiteThreadCount(b *testing.B) {
	st, err := server.OpenSQLite(context.Background(), ":memory:")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	now := time.Now()
	for i := range 10000 {
		t := &server.Thread{ID: fmt.Sprintf("t%05d", i), Owner: "o", CreatedAt: now, UpdatedAt: now, Status: server.ThreadIdle,
			Metadata: map[string]any{"user": fmt.Sprintf("u%d", i%10)}, Values: []byte(`{"messages":[{"type":"human","content":"hello"}]}`)}
		if err := st.CreateThread(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("count", func(b *testing.B) {
		for b.Loop() {
			if n, err := st.CountThreads(ctx, "o"); err != nil || n != 10000 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("search", func(b *testing.B) {
		for b.Loop() {
			if _, n, err := st.SearchThreads(ctx, server.ThreadQuery{Owner: "o", Limit: 1}); err != nil || n != 10000 {
				b.Fatal(n, err)
			}
		}
	})
}
