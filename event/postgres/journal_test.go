package postgres_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/journaltest"
	"github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func opener(t *testing.T, o journaltest.Options) func() event.Journal {
	pool, schema := postgrestest.Schema(t, "journal_")
	return func() event.Journal {
		j, err := postgres.NewJournal(t.Context(), postgres.JournalConfig{Pool: pool, Schema: schema, Lease: o.Lease, MaxEvents: o.MaxEvents})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = j.Close() })
		return j
	}
}

// TestJournalBehaviour runs the event.Journal suite on journals sharing
// one schema.
func TestJournalBehaviour(t *testing.T) {
	journaltest.Run(t, opener)
}

// TestReaderWokenByNotify follows a key with a lease of an hour, so the
// reader's fallback poll (a third of the lease) never fires: each event
// reaches it only through the append's NOTIFY.
func TestReaderWokenByNotify(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "journal_")
	open := func() *postgres.Journal {
		j, err := postgres.NewJournal(t.Context(), postgres.JournalConfig{Pool: pool, Schema: schema, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = j.Close() })
		return j
	}
	a, b := open(), open()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	if err := a.Append(ctx, "k", event.Event{Type: "step", Seq: 1, Payload: event.Raw{Type: "step", Fields: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	got := make(chan uint64)
	done := make(chan error, 1)
	go func() {
		for e, err := range b.Read(ctx, "k", 0) {
			if err != nil {
				done <- err
				return
			}
			got <- e.Seq
		}
		done <- nil
	}()
	for seq := uint64(1); seq <= 20; seq++ {
		if s := <-got; s != seq {
			t.Fatalf("got %d, want %d", s, seq)
		}
		if seq < 20 {
			if err := a.Append(ctx, "k", event.Event{Type: "step", Seq: seq + 1, Payload: event.Raw{Type: "step", Fields: []byte(`{}`)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.End(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestJournalConfigErrors checks that the errors of a bad configuration
// of a Journal or a Log name the config, the field and the fix.
func TestJournalConfigErrors(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "journal_")
	// Each opens nothing, so there is nothing to close.
	journal := func(cfg postgres.JournalConfig) error { _, err := postgres.NewJournal(t.Context(), cfg); return err }
	log := func(cfg postgres.LogConfig) error { _, err := postgres.NewLog(t.Context(), cfg); return err }
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"journal name", journal(postgres.JournalConfig{Pool: pool, Name: "Bad-Name"}), `postgres: JournalConfig.Name "Bad-Name": use 1 to 40 lower-case letters, digits and '_'`},
		{"journal pool and DSN", journal(postgres.JournalConfig{Pool: pool, DSN: "postgres://x"}), "postgres: JournalConfig has both Pool and DSN; set only one"},
		{"journal without database", journal(postgres.JournalConfig{}), "postgres: Config has neither Pool nor DSN; set one of them"},
		{"log name", log(postgres.LogConfig{Pool: pool, Name: "Bad-Name"}), `postgres: LogConfig.Name "Bad-Name": use 1 to 40 lower-case letters, digits and '_'`},
		{"log pool and DSN", log(postgres.LogConfig{Pool: pool, DSN: "postgres://x"}), "postgres: LogConfig has both Pool and DSN; set only one"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	j, err := postgres.NewJournal(t.Context(), postgres.JournalConfig{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.Append(t.Context(), "bad key", event.Event{}); err == nil {
		t.Error("Append with a key holding a space: no error")
	}
}

// TestPruneKeepsLiveKeys: keys past MaxAge are pruned once ended or left
// by their writer (its Journal closed), but a key still open by a live
// writer stays, however long ago it was written.
func TestPruneKeepsLiveKeys(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "journal_")
	open := func() *postgres.Journal {
		j, err := postgres.NewJournal(t.Context(), postgres.JournalConfig{Pool: pool, Schema: schema, Lease: time.Hour, MaxAge: 40 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = j.Close() })
		return j
	}
	a, b := open(), open()
	ctx := t.Context()
	ev := event.Event{Type: "step", Seq: 1, Payload: event.Raw{Type: "step", Fields: []byte(`{}`)}}
	for _, w := range []struct {
		j   *postgres.Journal
		key string
	}{{a, "live"}, {b, "left"}, {a, "done"}} {
		if err := w.j.Append(ctx, w.key, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.End(ctx, "done"); err != nil {
		t.Fatal(err)
	}
	// "done" was written last: once a prune deleted it, the others were
	// past MaxAge in that prune too.
	for {
		has, err := a.Has(ctx, "done")
		if err != nil {
			t.Fatal(err)
		}
		if !has {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for key, want := range map[string]bool{"live": true, "left": false} {
		if has, err := a.Has(ctx, key); err != nil || has != want {
			t.Errorf("key %s kept: %v (%v), want %v", key, has, err, want)
		}
	}
}
