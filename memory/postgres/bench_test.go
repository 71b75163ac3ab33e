package postgres_test

import (
	"fmt"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/memory"
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
func BenchmarkAppendTurn(b *testing.B) {
	s := benchStore(b)
	turn := []memory.Message{{Role: memory.RoleUser, Content: "What do competitors charge?"}, {Role: memory.RoleAssistant, Content: "Between $2.50 and $3.80."}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Append(b.Context(), "c", turn...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadWindow loads the summary and the last 5 messages of a
// 50-message conversation.
func BenchmarkLoadWindow(b *testing.B) {
	s := benchStore(b)
	for i := range 50 {
		if _, err := s.Append(b.Context(), "c", memory.Message{Role: memory.RoleUser, Content: fmt.Sprint("message ", i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if st, err := s.Load(b.Context(), "c", 5); err != nil || len(st.Messages) != 5 {
			b.Fatal(err, len(st.Messages))
		}
	}
}

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
