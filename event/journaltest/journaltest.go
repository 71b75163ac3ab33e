// Package journaltest checks that an [event.Journal] implementation
// behaves as the interface documents: replay after an id, live follow,
// the end of a key, unknown keys, a lost writer and dropped events. An
// implementation's tests call [Run] with a function that opens journals
// on one shared storage, as the instances of a service would.
package journaltest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
)

// Options are the settings Run asks a journal to be opened with.
type Options struct {
	// Lease is how long readers wait for a silent writer.
	Lease time.Duration
	// MaxEvents is how many of its latest events a key keeps.
	MaxEvents int
}

// Opener returns a function that opens journals with o on one storage of
// the test's own (each call opens another instance, which reads what the
// others write). The opener closes the journals when the test ends;
// Close must be safe to call twice.
type Opener func(t *testing.T, o Options) (open func() event.Journal)

// Run runs the behaviour suite against open.
func Run(t *testing.T, open Opener) {
	t.Run("ReplayAndFollow", func(t *testing.T) { replayAndFollow(t, open) })
	t.Run("UnknownKeyAndEnd", func(t *testing.T) { unknownKeyAndEnd(t, open) })
	t.Run("WriterLost", func(t *testing.T) { writerLost(t, open) })
	t.Run("EventsLost", func(t *testing.T) { eventsLost(t, open) })
}

func ev(seq uint64) event.Event {
	return event.Event{Type: "step", RequestID: "r1", Seq: seq, Time: time.Unix(0, 0).UTC(),
		Payload: event.Raw{Type: "step", Fields: []byte(`{"n":1}`)}}
}

func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	t.Cleanup(cancel)
	return ctx
}

// waitHas waits until j holds key (an Append may return before its
// event is stored).
func waitHas(t *testing.T, ctx context.Context, j event.Journal, key string) {
	t.Helper()
	for {
		ok, err := j.Has(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never held", key)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// replayAndFollow writes a key on one instance and reads it on another
// from after its first event: the stored event, then those appended while
// the reader follows, then the end. Another key's events do not mix in.
func replayAndFollow(t *testing.T, open Opener) {
	newJournal := open(t, Options{Lease: 10 * time.Second, MaxEvents: 100})
	a, b := newJournal(), newJournal()
	ctx := timeout(t)
	for seq := uint64(1); seq <= 2; seq++ {
		if err := a.Append(ctx, "k1", ev(seq)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Append(ctx, "k2", ev(1)); err != nil {
		t.Fatal(err)
	}
	waitHas(t, ctx, b, "k1")
	got, following := make(chan []uint64, 1), make(chan struct{})
	go func() {
		var seqs []uint64
		for e, err := range b.Read(ctx, "k1", 1) {
			if err != nil {
				t.Errorf("read: %v", err)
				break
			}
			seqs = append(seqs, e.Seq)
			if e.Seq == 2 {
				close(following)
			}
		}
		got <- seqs
	}()
	select {
	case <-following:
	case <-ctx.Done():
		t.Fatal("the reader never got the stored event")
	}
	if err := a.Append(ctx, "k1", ev(3)); err != nil {
		t.Fatal(err)
	}
	if err := a.End(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if seqs := <-got; !slices.Equal(seqs, []uint64{2, 3}) {
		t.Errorf("read after 1: %v, want [2 3]", seqs)
	}
	// After the end, a reader from the start gets everything and stops.
	var seqs []uint64
	for e, err := range b.Read(ctx, "k1", 0) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type != "step" || e.RequestID != "r1" {
			t.Errorf("event %+v: type or request id changed", e)
		}
		seqs = append(seqs, e.Seq)
	}
	if !slices.Equal(seqs, []uint64{1, 2, 3}) {
		t.Errorf("read of an ended key: %v, want [1 2 3]", seqs)
	}
}

// unknownKeyAndEnd checks Has and Read on a key never written, and a key
// ended without events.
func unknownKeyAndEnd(t *testing.T, open Opener) {
	newJournal := open(t, Options{Lease: 10 * time.Second, MaxEvents: 100})
	a, b := newJournal(), newJournal()
	ctx := timeout(t)
	if ok, err := b.Has(ctx, "nothing"); err != nil || ok {
		t.Fatalf("Has of an unknown key: %v %v", ok, err)
	}
	for _, err := range b.Read(ctx, "nothing", 0) {
		if !errors.Is(err, event.ErrUnknownKey) {
			t.Fatalf("Read of an unknown key: %v, want event.ErrUnknownKey", err)
		}
	}
	if err := a.End(ctx, "empty"); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Has(ctx, "empty"); err != nil || !ok {
		t.Fatalf("Has of an ended key: %v %v", ok, err)
	}
	for e, err := range b.Read(ctx, "empty", 0) {
		t.Fatalf("read of a key ended without events: %+v %v", e, err)
	}
}

// writerLost closes the writer of a key it did not end: a reader on
// another instance gets what was written, then event.ErrWriterLost.
func writerLost(t *testing.T, open Opener) {
	newJournal := open(t, Options{Lease: time.Second, MaxEvents: 100})
	a, b := newJournal(), newJournal()
	ctx := timeout(t)
	if err := a.Append(ctx, "k", ev(1)); err != nil {
		t.Fatal(err)
	}
	waitHas(t, ctx, b, "k")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	var last error
	for e, err := range b.Read(ctx, "k", 0) {
		if err != nil {
			last = err
			break
		}
		seqs = append(seqs, e.Seq)
	}
	if !slices.Equal(seqs, []uint64{1}) || !errors.Is(last, event.ErrWriterLost) {
		t.Errorf("read of a lost writer's key: %v then %v, want [1] then event.ErrWriterLost", seqs, last)
	}
}

// eventsLost writes more events than a key keeps: a reader from the
// start gets an events_lost error event first, then the kept ones.
func eventsLost(t *testing.T, open Opener) {
	newJournal := open(t, Options{Lease: 10 * time.Second, MaxEvents: 3})
	a := newJournal()
	ctx := timeout(t)
	for seq := uint64(1); seq <= 5; seq++ {
		if err := a.Append(ctx, "k", ev(seq)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.End(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	var lost *event.Error
	for e, err := range newJournal().Read(ctx, "k", 0) {
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := e.Payload.(event.Error); ok && len(seqs) == 0 {
			lost = &p
			continue
		}
		seqs = append(seqs, e.Seq)
	}
	if lost == nil || lost.Code != "events_lost" {
		t.Errorf("no events_lost error event first (got %+v)", lost)
	}
	// End is a message of the key's too in some journals: the kept
	// events are the last 2 or 3.
	if !slices.Equal(seqs, []uint64{3, 4, 5}) && !slices.Equal(seqs, []uint64{4, 5}) {
		t.Errorf("kept events: %v, want the last of 1..5", seqs)
	}
}
