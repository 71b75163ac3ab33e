package postgres_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// readAll reads key from after 0 to its end: a Seq each, "lost N" for an
// events_lost notice, "err: ..." for an error.
func readAll(ctx context.Context, j event.Journal, key string) []string {
	var got []string
	for ev, err := range j.Read(ctx, key, 0) {
		if err != nil {
			return append(got, "err: "+err.Error())
		}
		if e, ok := ev.Payload.(event.Error); ok && e.Code == "events_lost" {
			got = append(got, "lost "+strconv.FormatUint(ev.Seq, 10))
			continue
		}
		got = append(got, strconv.FormatUint(ev.Seq, 10))
	}
	return got
}

// TestJournalReadTellsOfBadRows: a row that does not decode, and one whose
// Seq is the largest, hide none of the events after them, and the reader
// is told of each.
func TestJournalReadTellsOfBadRows(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "journal_")
	j, err := postgres.NewJournal(t.Context(), postgres.JournalConfig{Pool: pool, Schema: schema, Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	app := func(k string, s uint64) {
		t.Helper()
		if err := j.Append(ctx, k, event.Event{Type: "step", RequestID: "r", Seq: s, Payload: event.Raw{Type: "step", Fields: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, data string
		seq        int64
		want       []string
	}{
		{"corrupt", "not json", 3, []string{"1", "2", "lost 3", "4", "5"}},
		{"largest seq", `{"type":"step","request_id":"r","seq":18446744073709551615,"time":"2026-01-01T00:00:00Z"}`, -1,
			// Told as far past the position and shown; the events after
			// it are not hidden.
			[]string{"1", "2", "lost 2", strconv.FormatUint(math.MaxUint64, 10), "4", "5"}},
	} {
		k := strings.ReplaceAll(tc.name, " ", "_")
		app(k, 1)
		app(k, 2)
		// Another writer of the tables adds the row at the next position.
		if _, err := pool.Exec(ctx, fmt.Sprintf(`WITH k AS (UPDATE %[1]q.event_journal_keys SET next = next + 1 WHERE key = $1 RETURNING next - 1 AS pos)
			INSERT INTO %[1]q.event_journal_events (key, pos, seq, data) SELECT $1, pos, $2, $3 FROM k`, schema), k, tc.seq, []byte(tc.data)); err != nil {
			t.Fatal(err)
		}
		app(k, 4)
		app(k, 5)
		if err := j.End(ctx, k); err != nil {
			t.Fatal(err)
		}
		if got := readAll(ctx, j, k); !cmp.Equal(got, tc.want) {
			t.Errorf("%s: read %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestJournalRefusesLargeEvent: Append refuses an event above
// MaxEventBytes, naming the setting, and stores none of it.
func TestJournalRefusesLargeEvent(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "journal_")
	j, err := postgres.NewJournal(t.Context(), postgres.JournalConfig{Pool: pool, Schema: schema, Lease: time.Hour, MaxEventBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	ctx := t.Context()
	big := event.Event{Type: "step", Seq: 1, Payload: event.Raw{Type: "step", Fields: []byte(`{"x":"` + strings.Repeat("a", 1000) + `"}`)}}
	err = j.Append(ctx, "k", big)
	if err == nil || !strings.Contains(err.Error(), "JournalConfig.MaxEventBytes") {
		t.Fatalf("Append of an event above MaxEventBytes = %v, want an error naming JournalConfig.MaxEventBytes", err)
	}
	if has, err := j.Has(ctx, "k"); err != nil || has {
		t.Fatalf("Has after the refused Append = %v, %v; want false", has, err)
	}
}
