package event

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// Errors of a [Journal]'s Read. Implementations return these values (or
// wrap them), so callers test for them with errors.Is whatever the
// implementation.
var (
	// ErrUnknownKey: the journal holds nothing under the key (never
	// written, or past the journal's retention).
	ErrUnknownKey = errors.New("event: no journal under that key (never written, or past its retention)")
	// ErrWriterLost: the process writing the key stopped (its lease or
	// heartbeats ended) before it ended the key; no more events will come.
	ErrWriterLost = errors.New("event: the journal's writer stopped before it ended the key")
)

// Journal keeps keyed event streams (one per run, one per request) where
// every process sharing it can read them: a client that lost its
// connection to one process resumes the stream on another, which replays
// the events it missed and then follows the stream live until its writer
// ends it. It is the fan-out of a stream across the instances of a
// service; the natsbus subpackage keeps it in NATS JetStream, the
// postgres subpackage in PostgreSQL.
//
// A key is 1 to 128 letters, digits, '_' and '-' ([CheckJournalKey]);
// every method refuses another. One process writes a key: it appends the key's events in order and
// ends the key once. Readers identify events by their Seq, which the
// writer numbers from 1. A journal keeps a bounded number of each key's
// latest events for a bounded time; a reader that asks for events already
// dropped gets an [Error] event with code "events_lost" first, then the
// events that are still kept. A reader skips the events at or below the
// Seq it resumes after, and those at or below the largest Seq it was given
// (copies, events out of order). A stored event that does not decode is
// told by an events_lost event. A gap in the Seqs after the first event
// read is no loss: an [Emitter] numbers a progress event that replaces
// queued ones after the events between (see [Event.Coalesced]); events
// the journal drops in the middle of a read (a slow reader) are told by
// an events_lost event, which the implementation detects from its storage.
// An event numbered far past the largest Seq given (more than 1<<20) is
// told and shown, and does not hide the events after it.
//
// Implementations are safe for concurrent use.
type Journal interface {
	// Append adds ev to key's events. An implementation may return
	// before ev is stored (End waits for it).
	Append(ctx context.Context, key string, ev Event) error
	// End marks key complete, once every event appended before is
	// stored: readers that reach the mark stop.
	End(ctx context.Context, key string) error
	// Has reports whether key holds events or its end.
	Has(ctx context.Context, key string) (bool, error)
	// Read yields key's events with Seq above after, oldest first: those
	// stored, then those still to come, until the key's end, ctx's end
	// (its error is yielded), or the writer's loss ([ErrWriterLost]). A
	// key with nothing yields [ErrUnknownKey] at once.
	Read(ctx context.Context, key string, after uint64) iter.Seq2[Event, error]
	// Close stops the journal's work; keys this process writes and did
	// not end are then, for readers elsewhere, lost.
	Close() error
}

// CheckJournalKey returns an error naming key unless it is a valid
// [Journal] key: 1 to 128 ASCII letters, digits, '_' and '-'.
func CheckJournalKey(key string) error {
	if len(key) == 0 || len(key) > 128 {
		return fmt.Errorf("event: journal key %q: use 1 to 128 letters, digits, '_' and '-'", key)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("event: journal key %q: use 1 to 128 letters, digits, '_' and '-'", key)
		}
	}
	return nil
}
