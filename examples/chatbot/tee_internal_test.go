package chatbot

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/sse"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestJournaledTurnStream: a resumable turn's stream on an instance with
// a journal (PostgreSQL here). Its events in the journal are delivered (a
// client may read them on another instance), so the turn does not wait
// for a client here nor stop after ResumeWait while one reads elsewhere;
// and when its events do wait unread (the journal failed them), the
// journal holds just what the stream took, so the no_reader event that
// follows has the same id on every instance.
func TestJournaledTurnStream(t *testing.T) {
	dsn, schema := internalPostgres(t)
	b, err := openTestBot(t, Config{Postgres: dsn, PostgresSchema: schema, InstanceLease: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if b.cluster == nil {
		t.Fatal("a bot on PostgreSQL has no cluster")
	}
	events := func(yield func(event.Event, error) bool) {
		for i := range 10 {
			if !yield(event.Event{Type: chatevent.TypeResponseChunk, RequestID: "r", Seq: uint64(i + 1), Time: time.Unix(1e9, 0),
				Payload: chatevent.ResponseChunk{Content: strconv.Itoa(i)}}, nil) {
				return
			}
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // bounds a broken test only
	defer cancel()
	journaled := func(key string) []uint64 {
		t.Helper()
		b.cluster.end(key)
		var seqs []uint64
		for ev, err := range b.cluster.journal.Read(ctx, key, 0) {
			if err != nil {
				t.Fatalf("reading %s: %v", key, err)
			}
			seqs = append(seqs, ev.Seq)
		}
		return seqs
	}

	// No client here: the journal carries the events.
	st := sse.NewStream(sse.Config{Replay: 2, ReaderWait: time.Nanosecond})
	if err := st.Run(ctx, b.cluster.tee(ctx, "k-read-elsewhere", events, st.MarkSent)); err != nil {
		t.Errorf("journaled turn with no client here: Run = %v; want it to run to its end", err)
	}
	if got, want := journaled("k-read-elsewhere"), []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(got, want) {
		t.Errorf("journal holds %v; want %v", got, want)
	}

	// The journal's deliveries not counted: the stream takes 2 events,
	// then stops with no_reader at id 3; the journal holds the same 2.
	st = sse.NewStream(sse.Config{Replay: 2, ReaderWait: time.Nanosecond})
	if err := st.Run(ctx, b.cluster.tee(ctx, "k-unread", events, func() {})); !errors.Is(err, sse.ErrNoReader) {
		t.Fatalf("Run with its events unread = %v; want ErrNoReader", err)
	}
	if got, want := journaled("k-unread"), []uint64{1, 2}; !slices.Equal(got, want) {
		t.Errorf("journal holds %v after the stream took 2 events; want %v (the no_reader event follows them on every instance)", got, want)
	}
}

// internalPostgres returns the test PostgreSQL server's DSN and a schema
// of the test's own, dropped when it ends; it skips the test when no
// server answers.
func internalPostgres(t *testing.T) (dsn, schema string) {
	t.Helper()
	_, schema = postgrestest.Schema(t, "chatbot_")
	return postgrestest.DSN(), schema
}
