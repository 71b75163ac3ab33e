package postgres

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestReadBatchBoundedByBytes: one read statement returns events only
// while those before stay under MaxEventBytes, one at least, and says
// that more follow; the reader gets them all.
func TestReadBatchBoundedByBytes(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "journal_")
	ctx := t.Context()
	j, err := NewJournal(ctx, JournalConfig{Pool: pool, Schema: schema, Lease: time.Hour, MaxEventBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	fields := []byte(`{"x":"` + strings.Repeat("a", 600) + `"}`)
	for s := uint64(1); s <= 10; s++ {
		if err := j.Append(ctx, "k", event.Event{Type: "step", Seq: s, Payload: event.Raw{Type: "step", Fields: fields}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.End(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	b, err := j.readBatch(ctx, "k", -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.data) != 2 || !b.more {
		t.Fatalf("first batch has %d events (more: %v); want 2 (the second reaching 1000 bytes), and more", len(b.data), b.more)
	}
	n := 0
	for _, err := range j.Read(ctx, "k", 0) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 10 {
		t.Fatalf("Read yielded %d events, want 10", n)
	}
}

// TestReadTellsOfTrimBetweenBatches: events trimmed (past the key's
// MaxEvents) between two batches of one read are told to the reader with
// an events_lost notice; the gap was taken for an Emitter's coalescing.
func TestReadTellsOfTrimBetweenBatches(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "journal_")
	ctx := t.Context()
	j, err := NewJournal(ctx, JournalConfig{Pool: pool, Schema: schema, Lease: time.Hour, MaxEventBytes: 1000, MaxEvents: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	fields := []byte(`{"x":"` + strings.Repeat("a", 600) + `"}`)
	appendTo := func(from, to uint64) {
		for s := from; s <= to; s++ {
			if err := j.Append(ctx, "k", event.Event{Type: "step", Seq: s, Payload: event.Raw{Type: "step", Fields: fields}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendTo(1, 10)
	var got []string
	for ev, err := range j.Read(ctx, "k", 0) {
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := ev.Payload.(event.Error); ok && e.Code == "events_lost" {
			got = append(got, "lost "+strconv.FormatUint(ev.Seq, 10))
			continue
		}
		got = append(got, strconv.FormatUint(ev.Seq, 10))
		if ev.Seq == 2 { // the end of the first batch: 3 to 10 go
			appendTo(11, 20)
			if err := j.End(ctx, "k"); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{"1", "2", "lost 10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20"}
	if !slices.Equal(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
}
