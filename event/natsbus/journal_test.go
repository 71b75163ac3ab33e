package natsbus

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/journaltest"
)

// newJournal opens a journal on stream, deleted when the test ends.
func newJournal(t *testing.T, url, stream string, lease time.Duration) *Journal {
	t.Helper()
	return openJournal(t, JournalConfig{URL: url, Stream: stream, Lease: lease, MaxAge: time.Minute})
}

// openJournal opens a journal of cfg; the test's end closes it and deletes
// its stream.
func openJournal(t *testing.T, cfg JournalConfig) *Journal {
	t.Helper()
	url, stream := cfg.URL, cfg.Stream
	j, err := NewJournal(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = j.Close()
		nc, err := nats.Connect(url)
		if err != nil {
			return
		}
		defer nc.Close()
		if js, err := jetstream.New(nc); err == nil {
			_ = js.DeleteStream(context.Background(), stream)
		}
	})
	return j
}

func progress(seq uint64) event.Event {
	return event.Event{Type: "step", RequestID: "r1", Seq: seq, Time: time.Unix(0, 0).UTC(), Payload: event.Raw{Type: "step", Fields: []byte(`{"n":1}`)}}
}

func readAll(t *testing.T, ctx context.Context, j *Journal, key string, after uint64) ([]uint64, error) {
	t.Helper()
	var seqs []uint64
	for ev, err := range j.Read(ctx, key, after) {
		if err != nil {
			return seqs, err
		}
		seqs = append(seqs, ev.Seq)
	}
	return seqs, nil
}

// TestJournalReplayAcrossInstances writes a key on one journal and reads
// it on another, from the start and after an event, while it is written
// and after it ended; an unknown key is ErrUnknownKey.
func TestJournalReplayAcrossInstances(t *testing.T) {
	url := natsURL(t)
	stream := "journaltest-" + randomID()
	a := newJournal(t, url, stream, 3*time.Second)
	b := newJournal(t, url, stream, 3*time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	for seq := uint64(1); seq <= 2; seq++ {
		if err := a.Append(ctx, "k1", progress(seq)); err != nil {
			t.Fatal(err)
		}
	}
	// Append does not wait for the server: make sure 1 and 2 are stored
	// before the reader looks the key up.
	if err := a.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// A reader that joins mid-way gets the rest as it comes: 3 is
	// appended once it has 2, so it follows the key live.
	got, following := make(chan []uint64, 1), make(chan struct{})
	go func() {
		var seqs []uint64
		for ev, err := range b.Read(ctx, "k1", 1) {
			if err != nil {
				t.Error(err)
				break
			}
			seqs = append(seqs, ev.Seq)
			if len(seqs) == 1 {
				close(following)
			}
		}
		got <- seqs
	}()
	select {
	case <-following:
	case <-ctx.Done():
		t.Fatal("the reader did not get event 2")
	}
	if err := a.Append(ctx, "k1", progress(3)); err != nil {
		t.Fatal(err)
	}
	if err := a.End(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{2, 3}, <-got); diff != "" {
		t.Errorf("read after 1 while written (-want +got):\n%s", diff)
	}
	seqs, err := readAll(t, ctx, b, "k1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{1, 2, 3}, seqs); diff != "" {
		t.Errorf("read from the start (-want +got):\n%s", diff)
	}
	if _, err := readAll(t, ctx, b, "nothing", 0); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key: %v, want ErrUnknownKey", err)
	}
}

// TestJournalWriterLost closes the writer of an unended key: a reader on
// another journal gets its events, then ErrWriterLost within the lease.
func TestJournalWriterLost(t *testing.T) {
	url := natsURL(t)
	stream := "journaltest-" + randomID()
	const lease = time.Second
	a := newJournal(t, url, stream, lease)
	b := newJournal(t, url, stream, lease)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := a.Append(ctx, "k1", progress(1)); err != nil {
		t.Fatal(err)
	}
	if err := a.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	start := time.Now()
	seqs, err := readAll(t, ctx, b, "k1", 0)
	if !errors.Is(err, ErrWriterLost) {
		t.Fatalf("read of a dead writer's key: %v after %v, want ErrWriterLost", err, seqs)
	}
	if diff := cmp.Diff([]uint64{1}, seqs); diff != "" {
		t.Errorf("events before the loss (-want +got):\n%s", diff)
	}
	if waited := time.Since(start); waited > 10*lease { // failure guard, not a speed check
		t.Errorf("ErrWriterLost after %v; the lease is %v", waited, lease)
	}
}

// TestJournalEndedKeyReadSlowly ends a key and closes its writer; a reader
// that takes longer than the lease over each event still gets them all
// and no ErrWriterLost: an ended key has no writer to lose.
func TestJournalEndedKeyReadSlowly(t *testing.T) {
	url := natsURL(t)
	stream := "journaltest-" + randomID()
	const lease = 300 * time.Millisecond
	a := newJournal(t, url, stream, lease)
	b := newJournal(t, url, stream, lease)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for seq := uint64(1); seq <= 5; seq++ {
		if err := a.Append(ctx, "k1", progress(seq)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.End(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	var seqs []uint64
	for ev, err := range b.Read(ctx, "k1", 0) {
		if err != nil {
			t.Fatalf("slow read of an ended key: %v after %v", err, seqs)
		}
		seqs = append(seqs, ev.Seq)
		time.Sleep(2 * lease) // a slow client: the lease runs out while it reads
	}
	if diff := cmp.Diff([]uint64{1, 2, 3, 4, 5}, seqs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestJournalBehaviour runs the event.Journal suite on journals sharing
// one stream.
func TestJournalBehaviour(t *testing.T) {
	journaltest.Run(t, func(t *testing.T, o journaltest.Options) func() event.Journal {
		url := natsURL(t)
		stream := "journaltest-" + randomID()
		return func() event.Journal {
			return openJournal(t, JournalConfig{URL: url, Stream: stream, Lease: o.Lease, MaxEvents: o.MaxEvents, MaxAge: time.Minute})
		}
	})
}
