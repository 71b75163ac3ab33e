// Package storebench holds the benchmarks that every SQL [memory.Store]
// of this module (memory/postgres, memory/sqlite) runs, so that their
// numbers compare.
package storebench

import (
	"fmt"
	"testing"

	"github.com/agentgraph/agentgraph/memory"
)

// AppendTurn appends a user message and an answer to s, in one call.
func AppendTurn(b *testing.B, s memory.Store) {
	turn := []memory.Message{{Role: memory.RoleUser, Content: "What do competitors charge?"}, {Role: memory.RoleAssistant, Content: "Between $2.50 and $3.80."}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Append(b.Context(), "c", turn...); err != nil {
			b.Fatal(err)
		}
	}
}

// LoadWindow loads from s the summary and the last 5 messages of a
// 50-message conversation.
func LoadWindow(b *testing.B, s memory.Store) {
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
