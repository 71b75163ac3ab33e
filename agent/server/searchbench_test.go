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
