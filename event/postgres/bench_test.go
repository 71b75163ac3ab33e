package postgres_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// BenchmarkJournalAppend appends one event to a key, as a resumable
// turn does per event (one statement, stored when it returns).
func BenchmarkJournalAppend(b *testing.B) {
	pool, schema := postgrestest.Schema(b, "journal_")
	j, err := postgres.NewJournal(b.Context(), postgres.JournalConfig{Pool: pool, Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	ev := event.Event{Type: "step", RequestID: "r1", Time: time.Unix(0, 0).UTC(), Payload: event.Raw{Type: "step", Fields: []byte(`{"n":1}`)}}
	b.ReportAllocs()
	for b.Loop() {
		ev.Seq++
		if err := j.Append(b.Context(), "k", ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJournalAppendParallel appends from concurrent goroutines
// (GOMAXPROCS×4 of them, each to a key of its own), as the turns of many
// conversations do: appends in flight together share a write.
func BenchmarkJournalAppendParallel(b *testing.B) {
	pool, schema := postgrestest.Schema(b, "journal_")
	j, err := postgres.NewJournal(b.Context(), postgres.JournalConfig{Pool: pool, Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	var keys atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		key := fmt.Sprintf("k%d", keys.Add(1))
		ev := event.Event{Type: "step", RequestID: "r1", Time: time.Unix(0, 0).UTC(), Payload: event.Raw{Type: "step", Fields: []byte(`{"n":1}`)}}
		for pb.Next() {
			ev.Seq++
			if err := j.Append(b.Context(), key, ev); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
