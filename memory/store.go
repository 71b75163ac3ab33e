package memory

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Store keeps conversations: an append-only log of messages per conversation
// id, and the running summary of the log's oldest part. Implementations are
// safe for concurrent use, and concurrent appends to one conversation lose
// nothing: every message gets its own Seq, consecutive from 1.
//
// This package has an in-memory Store ([NewInMemoryStore]); the sqlite
// and postgres packages keep conversations in SQLite and PostgreSQL. The
// memorytest package checks any implementation against the contract below.
type Store interface {
	// Append adds msgs, in order, to the end of the conversation, creating
	// it if needed. It assigns each message the next Seq and sets a zero
	// Time to now, and returns the Seq of the last message appended (of
	// the conversation's last message when msgs is empty). Append is
	// atomic: either every message is stored or none.
	Append(ctx context.Context, conversationID string, msgs ...Message) (last int64, err error)
	// Load returns the summary, the last Seq and the last n messages
	// (fewer if the conversation has fewer; none when n <= 0), oldest
	// first, as one consistent snapshot. An unknown conversation yields an
	// empty State and no error.
	Load(ctx context.Context, conversationID string, n int) (State, error)
	// History returns up to limit messages with Seq > after, oldest first.
	// limit <= 0 means no limit.
	History(ctx context.Context, conversationID string, after int64, limit int) ([]Message, error)
	// SaveSummary replaces the summary if the stored summary still covers
	// exactly through prevThrough; otherwise it returns
	// [ErrSummaryConflict] and changes nothing. s.Through must be greater
	// than prevThrough and at most the conversation's last Seq.
	SaveSummary(ctx context.Context, conversationID string, s Summary, prevThrough int64) error
	// Delete removes the conversation, its messages and its summary.
	// Deleting an unknown conversation is not an error. It accepts any
	// non-empty id, also one [ValidateID] refuses, so that a conversation
	// stored before that check can be removed; the empty id is
	// [ErrEmptyID].
	Delete(ctx context.Context, conversationID string) error
}

// Summary is the running summary of a conversation's oldest messages.
type Summary struct {
	// Text is the summary.
	Text string
	// Through is the Seq of the last message the summary covers; 0 when
	// there is no summary yet.
	Through int64
	// Updated is when the summary was last saved; zero when there is none.
	// A Store sets it on SaveSummary.
	Updated time.Time
}

// State is what [Store.Load] returns: the summary, the last Seq and the
// most recent messages, oldest first.
type State struct {
	// Summary is the conversation's running summary.
	Summary Summary
	// Last is the Seq of the conversation's last message; 0 when it has
	// none.
	Last int64
	// Messages are the last n messages asked for, oldest first.
	Messages []Message
}

// CheckSummary validates the arguments of [Store.SaveSummary] against the
// conversation's last Seq. Store implementations call it so that every
// store rejects the same input with the same errors.
func CheckSummary(conversationID string, s Summary, prevThrough, last int64) error {
	if err := ValidateID(conversationID); err != nil {
		return err
	}
	if s.Through <= prevThrough {
		return &summaryRangeError{through: s.Through, prev: prevThrough, last: last}
	}
	if s.Through > last {
		return &summaryRangeError{through: s.Through, prev: prevThrough, last: last}
	}
	return nil
}

type summaryRangeError struct{ through, prev, last int64 }

func (e *summaryRangeError) Error() string {
	return fmt.Sprintf("memory: Summary.Through %d is out of range: it must be greater than the previous Through (%d) and at most the conversation's last Seq (%d)",
		e.through, e.prev, e.last)
}

// InMemoryStore is a [Store] that keeps conversations in process memory.
// Its zero value is not usable; call [NewInMemoryStore]. It suits tests,
// single-process services and conversations that need not outlive the
// process.
type InMemoryStore struct {
	mu    sync.RWMutex
	convs map[string]*memConv
	now   func() time.Time
}

type memConv struct {
	msgs    []Message
	summary Summary
}

// NewInMemoryStore returns an empty in-memory store.
func NewInMemoryStore() *InMemoryStore {
	return &InMemoryStore{convs: make(map[string]*memConv), now: time.Now}
}

// Append implements [Store].
func (s *InMemoryStore) Append(ctx context.Context, id string, msgs ...Message) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := ValidateAppend(id, msgs); err != nil {
		return 0, err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.convs[id]
	if c == nil {
		c = &memConv{}
		s.convs[id] = c
	}
	for _, m := range msgs {
		m.Seq = int64(len(c.msgs)) + 1
		if m.Time.IsZero() {
			m.Time = now
		}
		c.msgs = append(c.msgs, m)
	}
	return int64(len(c.msgs)), nil
}

// Load implements [Store].
func (s *InMemoryStore) Load(ctx context.Context, id string, n int) (State, error) {
	if err := ctx.Err(); err != nil {
		return State{}, err
	}
	if err := ValidateID(id); err != nil {
		return State{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	c := s.convs[id]
	if c == nil {
		return State{}, nil
	}
	last := int64(len(c.msgs))
	st := State{Summary: c.summary, Last: last}
	if n > 0 {
		st.Messages = slices.Clone(c.msgs[max(last-int64(n), 0):])
	}
	return st, nil
}

// History implements [Store].
func (s *InMemoryStore) History(ctx context.Context, id string, after int64, limit int) ([]Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	c := s.convs[id]
	if c == nil || after >= int64(len(c.msgs)) {
		return nil, nil
	}
	msgs := c.msgs[max(after, 0):]
	if limit > 0 && len(msgs) > limit {
		msgs = msgs[:limit]
	}
	return slices.Clone(msgs), nil
}

// SaveSummary implements [Store].
func (s *InMemoryStore) SaveSummary(ctx context.Context, id string, sum Summary, prevThrough int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateID(id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.convs[id]
	var last, through int64
	if c != nil {
		last, through = int64(len(c.msgs)), c.summary.Through
	}
	if err := CheckSummary(id, sum, prevThrough, last); err != nil {
		return err
	}
	if through != prevThrough {
		return ErrSummaryConflict
	}
	sum.Updated = s.now()
	c.summary = sum
	return nil
}

// Delete implements [Store].
func (s *InMemoryStore) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if id == "" {
		return ErrEmptyID
	}
	s.mu.Lock()
	delete(s.convs, id)
	s.mu.Unlock()
	return nil
}
