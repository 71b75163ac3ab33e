package postgres_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/memory/internal/storebench"
	"github.com/agentgraph/agentgraph/memory/postgres"
)

func benchStore(b *testing.B) *postgres.Store {
	pool, schema := postgrestest.Schema(b, "memtest_")
	s, err := postgres.New(b.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkAppendTurn appends a user message and an answer, in one
// transaction.
func BenchmarkAppendTurn(b *testing.B) { storebench.AppendTurn(b, benchStore(b)) }

// BenchmarkLoadWindow loads the summary and the last 5 messages of a
// 50-message conversation.
func BenchmarkLoadWindow(b *testing.B) { storebench.LoadWindow(b, benchStore(b)) }

// BenchmarkLockUnlock takes and releases an uncontended conversation
// lock, as every turn does.
func BenchmarkLockUnlock(b *testing.B) {
	s := benchStore(b)
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		unlock, err := s.Lock(b.Context(), "c")
		if err != nil {
			b.Fatal(err)
		}
		unlock()
	}
}
