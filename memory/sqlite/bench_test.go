package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/agentgraph/agentgraph/memory/internal/storebench"
	"github.com/agentgraph/agentgraph/memory/sqlite"
)

func benchStore(b *testing.B) *sqlite.Store {
	s, err := sqlite.New(b.Context(), sqlite.Config{Path: filepath.Join(b.TempDir(), "bench.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkAppendTurn appends a user message and an answer, in one
// transaction, to a file database.
func BenchmarkAppendTurn(b *testing.B) { storebench.AppendTurn(b, benchStore(b)) }

// BenchmarkLoadWindow loads the summary and the last 5 messages of a
// 50-message conversation.
func BenchmarkLoadWindow(b *testing.B) { storebench.LoadWindow(b, benchStore(b)) }
