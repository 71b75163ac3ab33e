package memory

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/internal/keyedmutex"
)

// Defaults used when a [ConversationConfig] field is zero.
const (
	// DefaultWindow is the number of most recent messages kept verbatim.
	DefaultWindow = 5
	// DefaultMaxBatch is the most messages folded into the summary by one
	// Summarizer call.
	DefaultMaxBatch = 50
)

// ConversationConfig configures [NewConversations].
type ConversationConfig struct {
	// Store keeps the messages and summaries. Required.
	Store Store
	// Summarizer folds messages that leave the window into the running
	// summary. Nil keeps no summary: older messages stay in the store
	// ([Conversations.History]) but leave the assembled context.
	Summarizer Summarizer
	// Window is how many of the most recent messages are kept verbatim.
	// Zero means [DefaultWindow] (5); it must not be negative.
	Window int
	// MinBatch is how many messages must have left the window, unsummarized,
	// before the summarizer runs; they are then folded together in one
	// call. Zero means 1: summarize whenever a message has left. A larger
	// value calls the model less often; the messages waiting meanwhile
	// appear verbatim in [View.Pending].
	MinBatch int
	// MaxBatch bounds how many messages one Summarizer call folds; a
	// longer backlog (after summarizer failures, or a bulk import) is
	// folded in several calls, oldest first. Zero means [DefaultMaxBatch].
	MaxBatch int
	// Logger receives summarizer failures and conflicts. Nil means no
	// logging.
	Logger *zap.Logger
}

// Conversations is the conversation memory of an agent: for each
// conversation id, the last Window messages verbatim plus a running summary
// of the older ones. It is safe for concurrent use; share one per Store.
type Conversations struct {
	store      Store
	summarizer Summarizer
	window     int
	minBatch   int
	maxBatch   int
	log        *zap.Logger

	// folding serializes summarizing per conversation within the process
	// (striped by id hash), so that concurrent appends do not pay for the
	// same summary twice; across processes the store's compare-and-swap
	// keeps summaries right.
	folding [foldStripes]chan struct{}

	// turns holds the conversations reserved with Lock.
	turns keyedmutex.Mutex
}

const foldStripes = 64

// NewConversations returns the conversation memory described by cfg.
func NewConversations(cfg ConversationConfig) (*Conversations, error) {
	var errs []error
	if cfg.Store == nil {
		errs = append(errs, errors.New("memory: ConversationConfig.Store is nil; set it to memory.NewInMemoryStore() or a SQL store"))
	}
	if cfg.Window < 0 {
		errs = append(errs, fmt.Errorf("memory: ConversationConfig.Window is %d; use 0 for the default (%d) or a positive count", cfg.Window, DefaultWindow))
	}
	if cfg.MinBatch < 0 {
		errs = append(errs, fmt.Errorf("memory: ConversationConfig.MinBatch is %d; use 0 for the default (1) or a positive count", cfg.MinBatch))
	}
	if cfg.MaxBatch < 0 {
		errs = append(errs, fmt.Errorf("memory: ConversationConfig.MaxBatch is %d; use 0 for the default (%d) or a positive count", cfg.MaxBatch, DefaultMaxBatch))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c := &Conversations{
		store:      cfg.Store,
		summarizer: cfg.Summarizer,
		window:     cmpOr(cfg.Window, DefaultWindow),
		minBatch:   cmpOr(cfg.MinBatch, 1),
		maxBatch:   cmpOr(cfg.MaxBatch, DefaultMaxBatch),
		log:        cfg.Logger,
	}
	if c.maxBatch < c.minBatch {
		c.maxBatch = c.minBatch
	}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	for i := range c.folding {
		c.folding[i] = make(chan struct{}, 1)
	}
	return c, nil
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Window returns the number of recent messages kept verbatim.
func (c *Conversations) Window() int { return c.window }

// Store returns the underlying store.
func (c *Conversations) Store() Store { return c.store }

// Lock reserves the conversation for one turn within this process: a
// second Lock of the same id waits until the first holder calls the
// returned unlock (exactly once), while other conversations go on. An
// application that reads the conversation, asks a model and appends the
// exchange holds it for the whole turn, so that two messages sent at once
// do not both answer the same history. If ctx ends first, Lock returns
// ctx's error and holds nothing. Waiters are not served in a particular
// order, and a conversation's lock takes memory only while it is held or
// waited for.
//
// When the Store is also a [Locker] (the postgres package's is), Lock then
// takes the store's lock too, so that instances of a service that share the
// Store serve a conversation's turns one at a time; otherwise instances do
// not see each other's locks, and a conversation's turns must be routed to
// one instance.
func (c *Conversations) Lock(ctx context.Context, conversationID string) (unlock func(), err error) {
	if conversationID == "" {
		return nil, ErrEmptyID
	}
	local, err := c.turns.Lock(ctx, conversationID)
	if err != nil {
		return nil, err
	}
	l, ok := c.store.(Locker)
	if !ok {
		return local, nil
	}
	shared, err := l.Lock(ctx, conversationID)
	if err != nil {
		local()
		return nil, err
	}
	return func() {
		shared()
		local()
	}, nil
}

// Locker is implemented by a [Store] that can reserve a conversation for
// every process that shares it; [Conversations.Lock] uses it.
type Locker interface {
	// Lock reserves conversationID until unlock is called (exactly once)
	// or the process holding it goes away, whichever comes first: a
	// second Lock of the same id, in any process, waits until then. If
	// ctx ends first, Lock returns ctx's error and holds nothing.
	Lock(ctx context.Context, conversationID string) (unlock func(), err error)
}

// Append adds messages to the conversation and, when messages have left the
// window, folds them into the summary with the Summarizer. The messages are
// stored before the summarizer runs, so a failing summarizer loses nothing:
// Append then returns a [*SummarizeError], the messages wait in
// [View.Pending], and the next Append or [Conversations.Summarize] tries
// again. Any failure after the messages were stored (the summarizer, the
// store, a cancelled ctx) comes as a *SummarizeError, so a caller can tell
// that the append itself succeeded and must not be repeated; errors.Is
// still sees the cause.
func (c *Conversations) Append(ctx context.Context, conversationID string, msgs ...Message) error {
	last, err := c.store.Append(ctx, conversationID, msgs...)
	if err != nil {
		return err
	}
	if last <= int64(c.window) {
		// Every message is inside the window: nothing to fold, and no
		// need to load the conversation to find that out.
		return nil
	}
	err = c.Summarize(ctx, conversationID)
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*SummarizeError](err); !ok {
		err = &SummarizeError{ConversationID: conversationID, Err: err}
	}
	return err
}

// Summarize folds every unsummarized message outside the window into the
// summary, in batches of at most MaxBatch, if at least MinBatch are waiting.
// It does nothing without a Summarizer. Within a process, summarizing one
// conversation is serialized: a call waits (until ctx is done) for one in
// progress and then folds only what is left. When a writer in another
// process saved a summary first, Summarize leaves the rest to it and
// returns nil.
func (c *Conversations) Summarize(ctx context.Context, conversationID string) error {
	if c.summarizer == nil {
		return nil
	}
	h := fnv.New32a()
	h.Write([]byte(conversationID))
	stripe := c.folding[h.Sum32()%foldStripes]
	select {
	case stripe <- struct{}{}:
		defer func() { <-stripe }()
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		st, err := c.store.Load(ctx, conversationID, 0)
		if err != nil {
			return err
		}
		waiting := st.Last - int64(c.window) - st.Summary.Through
		if waiting <= 0 || waiting < int64(c.minBatch) {
			return nil
		}
		batch, err := c.store.History(ctx, conversationID, st.Summary.Through, int(min(waiting, int64(c.maxBatch))))
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil // deleted meanwhile
		}
		text, err := c.summarizer.Summarize(ctx, st.Summary.Text, batch)
		if err == nil && text == "" {
			err = errors.New("the summarizer returned an empty summary")
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.log.Warn("memory: summarizer failed; messages kept for the next attempt",
				zap.String("conversation_id", conversationID), zap.Int64("pending", waiting), zap.Error(err))
			return &SummarizeError{ConversationID: conversationID, Pending: int(waiting), Err: err}
		}
		through := batch[len(batch)-1].Seq
		err = c.store.SaveSummary(ctx, conversationID, Summary{Text: text, Through: through}, st.Summary.Through)
		if errors.Is(err, ErrSummaryConflict) {
			c.log.Debug("memory: summary updated concurrently; leaving the fold to the other writer",
				zap.String("conversation_id", conversationID))
			return nil
		}
		if err != nil {
			return err
		}
		if int64(len(batch)) >= waiting {
			return nil
		}
	}
}

// View is what an agent knows of a conversation at the start of a turn.
type View struct {
	// Summary summarizes the messages before Pending.
	Summary Summary
	// Pending are messages that left the window but are not summarized yet
	// (MinBatch not reached, or the summarizer failed), oldest first.
	// Always empty without a Summarizer.
	Pending []Message
	// Recent are the last Window messages, oldest first.
	Recent []Message
}

// View returns the conversation's summary, pending messages and window.
// An unknown conversation yields an empty View.
func (c *Conversations) View(ctx context.Context, conversationID string) (View, error) {
	st, err := c.store.Load(ctx, conversationID, c.window)
	if err != nil {
		return View{}, err
	}
	v := View{Summary: st.Summary, Recent: st.Messages}
	if waiting := st.Last - int64(len(st.Messages)) - st.Summary.Through; c.summarizer != nil && waiting > 0 {
		v.Pending, err = c.store.History(ctx, conversationID, st.Summary.Through, int(waiting))
		if err != nil {
			return View{}, err
		}
	}
	return v, nil
}

// Recent returns the last n messages of the conversation, oldest first
// (fewer if it has fewer). n may exceed the window: older messages are read
// from the store's history.
func (c *Conversations) Recent(ctx context.Context, conversationID string, n int) ([]Message, error) {
	if n <= 0 {
		return nil, ValidateID(conversationID)
	}
	st, err := c.store.Load(ctx, conversationID, n)
	if err != nil {
		return nil, err
	}
	return st.Messages, nil
}

// History returns up to limit messages with Seq > after, oldest first;
// limit <= 0 means all. Every message ever appended is there, summarized or
// not.
func (c *Conversations) History(ctx context.Context, conversationID string, after int64, limit int) ([]Message, error) {
	return c.store.History(ctx, conversationID, after, limit)
}

// Delete forgets the conversation.
func (c *Conversations) Delete(ctx context.Context, conversationID string) error {
	return c.store.Delete(ctx, conversationID)
}
