package postgres_test

import (
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
