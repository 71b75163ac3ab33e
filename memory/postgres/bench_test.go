package postgres_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/memory/internal/storebench"
)

// BenchmarkAppendTurn appends a user message and an answer, in one
// transaction.
func BenchmarkAppendTurn(b *testing.B) { storebench.AppendTurn(b, newStore(b, "memtest_")) }

// BenchmarkLoadWindow loads the summary and the last 5 messages of a
// 50-message conversation.
func BenchmarkLoadWindow(b *testing.B) { storebench.LoadWindow(b, newStore(b, "memtest_")) }

// BenchmarkLockUnlock takes and releases an uncontended conversation
// lock, as every turn does.
func BenchmarkLockUnlock(b *testing.B) {
	s := newStore(b, "memtest_")
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
