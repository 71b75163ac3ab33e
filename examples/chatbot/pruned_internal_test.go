package chatbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/memory"
)

// TestPrunedConversationsLoseTheirMessages: with SQLite (DataDir) and
// PostgreSQL, a conversation the list prunes (its principal's list holds
// more than it shows) is deleted from the store with its entry, so that
// the store keeps no conversation that no list shows, that no DELETE can
// name and that does not count against MaxConversations; every
// conversation still listed keeps its messages. The list is filled past
// its bound as a list whose entries failed to be stored fills it: a turn
// of a stored conversation without an entry lists it anew, and prunes.
func TestPrunedConversationsLoseTheirMessages(t *testing.T) {
	stores := map[string]func(t *testing.T) Config{
		"sqlite": func(t *testing.T) Config { return Config{DataDir: t.TempDir()} },
		"postgres": func(t *testing.T) Config {
			dsn, schema := internalPostgres(t)
			return Config{Postgres: dsn, PostgresSchema: schema}
		},
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			cfg := store(t)
			cfg.Offline = true
			b, err := New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := b.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			ctx := t.Context()
			ns := b.convIndex.namespace("alice")
			ids := fillList(t, b)
			for _, err := range b.Chat(WithPrincipal(ctx, "alice"), Request{ConversationID: "unlisted", Message: "Hello again!"}) {
				if err != nil {
					t.Fatalf("turn of the unlisted conversation: %v", err)
				}
			}
			recs, err := b.convIndex.records(ctx, ns)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != maxListedConversations {
				t.Fatalf("alice's list holds %d entries after pruning; want %d", len(recs), maxListedConversations)
			}
			listed := map[string]bool{}
			for _, r := range recs {
				listed[r.Key] = true
			}
			if !listed["unlisted"] {
				t.Errorf("the conversation whose turn ran is not listed")
			}
			pruned := 0
			for _, id := range ids {
				st, err := b.convs.Store().Load(ctx, scoped("alice", id), 0)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case listed[id] && st.Last == 0:
					t.Errorf("listed conversation %s lost its messages", id)
				case !listed[id] && st.Last != 0:
					t.Errorf("pruned conversation %s keeps %d messages in the store; want none", id, st.Last)
				case !listed[id]:
					pruned++
				}
			}
			if want := len(ids) - maxListedConversations; pruned != want {
				t.Errorf("%d conversations pruned; want %d", pruned, want)
			}
		})
	}
}

// fillList lists for alice, in b's list and store, one more conversation
// than the list holds before it prunes, each with an exchange stored,
// and one stored conversation, "unlisted", without an entry, whose next
// turn lists it anew and so prunes the list. It returns the ids.
func fillList(t *testing.T, b *Bot) []string {
	t.Helper()
	ctx := t.Context()
	ns := b.convIndex.namespace("alice")
	value, _ := json.Marshal(listedConversation{Title: "Hello!"})
	exchange := []memory.Message{{Role: "user", Content: "Hello!"}, {Role: "assistant", Content: "Hi."}}
	var ids []string
	for i := range maxListedConversations + pruneSlack - probeEvery + 1 {
		id := fmt.Sprintf("c%03d", i)
		ids = append(ids, id)
		if _, err := b.convs.Store().Append(ctx, scoped("alice", id), exchange...); err != nil {
			t.Fatal(err)
		}
		if err := b.convIndex.items.Put(ctx, memory.Record{Namespace: ns, Key: id, Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.convs.Store().Append(ctx, scoped("alice", "unlisted"), exchange...); err != nil {
		t.Fatal(err)
	}
	return append(ids, "unlisted")
}

// TestPruneKeepsBusyConversations: with SQLite and PostgreSQL, a
// conversation the list would prune while a turn of it waits to run on
// this bot keeps its entry and its messages, and the turn goes on with
// its history; deleted, the turn would run on an empty history.
func TestPruneKeepsBusyConversations(t *testing.T) {
	stores := map[string]func(t *testing.T) Config{
		"sqlite": func(t *testing.T) Config { return Config{DataDir: t.TempDir()} },
		"postgres": func(t *testing.T) Config {
			dsn, schema := internalPostgres(t)
			return Config{Postgres: dsn, PostgresSchema: schema}
		},
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			cfg := store(t)
			cfg.Offline = true
			b, err := New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := b.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			fillList(t, b)
			alice := WithPrincipal(t.Context(), "alice")
			chat := func(id string) error {
				for _, err := range b.Chat(alice, Request{ConversationID: id, Message: "Hello again!"}) {
					if err != nil {
						return err
					}
				}
				return nil
			}
			recs, err := b.convIndex.records(t.Context(), b.convIndex.namespace("alice"))
			if err != nil {
				t.Fatal(err)
			}
			busy := recs[len(recs)-1].Key // the least recently used: pruned first
			other := recs[len(recs)-2].Key
			// busy's turn waits for its conversation's lock, held here.
			unlock, err := b.convs.Lock(t.Context(), scoped("alice", busy))
			if err != nil {
				t.Fatal(err)
			}
			waiting := make(chan error, 1)
			go func() { waiting <- chat(busy) }()
			deadline := time.Now().Add(time.Minute) // only a broken test waits that long
			for tracked := false; !tracked; {
				b.turnsRun.mu.Lock()
				for _, th := range b.turnsRun.cancels {
					tracked = tracked || th == scoped("alice", busy)
				}
				b.turnsRun.mu.Unlock()
				select {
				case err := <-waiting:
					unlock()
					t.Fatalf("busy's turn ended before it waited for its conversation: %v", err)
				default:
				}
				if time.Now().After(deadline) {
					unlock()
					t.Fatal("busy's turn was not tracked within a minute")
				}
				time.Sleep(time.Millisecond)
			}
			if err := chat("unlisted"); err != nil { // prunes the list
				unlock()
				t.Fatalf("turn of the unlisted conversation: %v", err)
			}
			unlock()
			if err := <-waiting; err != nil {
				t.Fatalf("the waiting turn of %s: %v", busy, err)
			}
			st, err := b.convs.Store().Load(t.Context(), scoped("alice", busy), 0)
			if err != nil {
				t.Fatal(err)
			}
			if st.Last != 4 {
				t.Errorf("%s, whose turn waited as the list was pruned, keeps %d messages; want 4 (its history and the turn's exchange)", busy, st.Last)
			}
			if st, err := b.convs.Store().Load(t.Context(), scoped("alice", other), 0); err != nil || st.Last != 0 {
				t.Errorf("%s, pruned beside the busy conversation, keeps %d messages (%v); want none", other, st.Last, err)
			}
		})
	}
}

// touchingItems is a conversation list on which a turn touches record
// touch (it is used again) as soon as the list of its namespace is read
// whole, the first time.
type touchingItems struct {
	memory.Items
	touch   memory.Record
	touched bool
}

func (x *touchingItems) Search(ctx context.Context, q memory.ItemQuery) ([]memory.Record, error) {
	recs, err := x.Items.Search(ctx, q)
	if err == nil && q.Limit == memory.MaxSearchLimit && !x.touched {
		x.touched = true
		err = x.Items.Put(ctx, x.touch)
	}
	return recs, err
}

// TestPruneKeepsEntriesUsedMeanwhile: an entry used after prune read the
// list (a turn began on it, on this instance or on another sharing the
// store) is recently used: prune keeps it and its conversation.
func TestPruneKeepsEntriesUsedMeanwhile(t *testing.T) {
	items := memory.NewInMemoryItems(memory.InMemoryItemsConfig{})
	var forgotten []string
	x := &conversationIndex{items: items, log: zap.NewNop(),
		forgotten: func(_ context.Context, _ []string, id string) { forgotten = append(forgotten, id) }}
	ns := x.namespace("alice")
	value, _ := json.Marshal(listedConversation{Title: "Hello!"})
	ctx := t.Context()
	for i := range maxListedConversations + pruneSlack {
		if err := items.Put(ctx, memory.Record{Namespace: ns, Key: fmt.Sprintf("c%03d", i), Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := x.records(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	used := recs[len(recs)-1] // the least recently used, as prune reads the list
	x.items = &touchingItems{Items: items, touch: used}
	x.prune(ctx, ns)
	if _, err := items.Get(ctx, ns, used.Key, false); err != nil {
		t.Errorf("the entry used as the list was pruned: %v; want it kept", err)
	}
	for _, id := range forgotten {
		if id == used.Key {
			t.Errorf("the conversation of the entry used as the list was pruned was forgotten")
		}
	}
	if len(forgotten) != pruneSlack-1 {
		t.Errorf("%d conversations forgotten; want %d (all beyond the list's bound but the one used)", len(forgotten), pruneSlack-1)
	}
}

// blockingDelete is a conversation store whose Delete of thread blocks
// until release is closed (or its ctx ends), after telling deleting
// whether its ctx has a deadline.
type blockingDelete struct {
	memory.Store
	thread   string
	deleting chan bool
	release  chan struct{}
}

func (s *blockingDelete) Delete(ctx context.Context, thread string) error {
	if thread == s.thread {
		_, bounded := ctx.Deadline()
		s.deleting <- bounded
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.Store.Delete(ctx, thread)
}

// TestSlowForgetHoldsOnlyItsConversation: with SQLite and PostgreSQL,
// while the list prunes a conversation whose store is slow to delete its
// messages, a turn of another principal's conversation starts and ends
// (the delete holds no lock turns need), the delete's context is bounded,
// and a turn of the conversation being forgotten waits until it is
// forgotten, then finds it gone: a new conversation, refused as alice
// keeps MaxConversations.
func TestSlowForgetHoldsOnlyItsConversation(t *testing.T) {
	stores := map[string]func(t *testing.T) Config{
		"sqlite": func(t *testing.T) Config { return Config{DataDir: t.TempDir()} },
		"postgres": func(t *testing.T) Config {
			dsn, schema := internalPostgres(t)
			return Config{Postgres: dsn, PostgresSchema: schema}
		},
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			cfg := store(t)
			cfg.Offline, cfg.MaxRunningTurns = true, -1
			b, err := New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := b.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			fillList(t, b)
			recs, err := b.convIndex.records(t.Context(), b.convIndex.namespace("alice"))
			if err != nil {
				t.Fatal(err)
			}
			// The least recently used, pruned last: alice keeps
			// MaxConversations or more conversations while it goes.
			gone := recs[len(recs)-1].Key
			slow := &blockingDelete{Store: b.convs.Store(), thread: scoped("alice", gone),
				deleting: make(chan bool, 1), release: make(chan struct{})}
			b.forgetWithList(slow)
			// Only release ends the delete, however slow the machine.
			b.convIndex.forgetWait = time.Hour
			released := false
			release := func() {
				if !released {
					released = true
					close(slow.release)
				}
			}
			defer release()
			chat := func(principal, id string, errs chan<- error) {
				for _, err := range b.Chat(WithPrincipal(t.Context(), principal), Request{ConversationID: id, Message: "Hello again!"}) {
					if err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}
			pruning := make(chan error, 1)
			go chat("alice", "unlisted", pruning) // prunes the list
			deadline := time.After(time.Minute)   // bounds a broken test only
			select {
			case bounded := <-slow.deleting:
				if !bounded {
					t.Errorf("the forgotten conversation's messages are deleted with a context without deadline; want one bounded")
				}
			case err := <-pruning:
				t.Fatalf("the pruning turn ended (%v) before deleting %s", err, gone)
			case <-deadline:
				t.Fatal("the pruning turn did not delete " + gone)
			}
			other := make(chan error, 1)
			go chat("bob", "b1", other)
			select {
			case err := <-other:
				if err != nil {
					t.Errorf("bob's turn while alice's conversation is deleted: %v", err)
				}
			case <-deadline:
				t.Fatal("bob's turn did not end while alice's conversation was being deleted; want it not held up")
			}
			forgotten := make(chan error, 1)
			go chat("alice", gone, forgotten)
			for tracked := false; !tracked; {
				b.turnsRun.mu.Lock()
				for _, th := range b.turnsRun.cancels {
					tracked = tracked || th == slow.thread
				}
				b.turnsRun.mu.Unlock()
				select {
				case err := <-forgotten:
					t.Fatalf("the turn of %s, being forgotten, ended (%v) before it was forgotten; want it to wait", gone, err)
				case <-deadline:
					t.Fatalf("the turn of %s was never tracked", gone)
				case <-time.After(time.Millisecond):
				}
			}
			release()
			if err := <-pruning; err != nil {
				t.Errorf("the pruning turn: %v", err)
			}
			if err := <-forgotten; !errors.Is(err, ErrConversationLimit) {
				t.Errorf("the turn of %s, which waited while it was forgotten: %v; want ErrConversationLimit (a new conversation; alice keeps MaxConversations)", gone, err)
			}
			if st, err := b.convs.Store().Load(t.Context(), slow.thread, 0); err != nil || st.Last != 0 {
				t.Errorf("%s, forgotten, keeps %d messages (%v); want none", gone, st.Last, err)
			}
		})
	}
}

// TestPruneKeepsConversationAdmittedElsewhere: with PostgreSQL, a turn
// admitted on one instance that waits for a running slot before it loads
// its conversation keeps the conversation when another instance prunes
// the list meanwhile: the turn refreshed its entry as it was admitted,
// and goes on with its history.
func TestPruneKeepsConversationAdmittedElsewhere(t *testing.T) {
	dsn, schema := internalPostgres(t)
	open := func(maxRunning int) *Bot {
		b, err := New(t.Context(), Config{Postgres: dsn, PostgresSchema: schema, Offline: true, MaxRunningTurns: maxRunning})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := b.Close(ctx); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return b
	}
	pruner, waiter := open(-1), open(1)
	fillList(t, pruner)
	recs, err := pruner.convIndex.records(t.Context(), pruner.convIndex.namespace("alice"))
	if err != nil {
		t.Fatal(err)
	}
	busy := recs[len(recs)-1].Key // the least recently used: pruned
	// The waiter's only running slot is held here.
	if err := waiter.running.acquire(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	alice := WithPrincipal(t.Context(), "alice")
	chat := func(b *Bot, id string) error {
		for _, err := range b.Chat(alice, Request{ConversationID: id, Message: "Hello again!"}) {
			if err != nil {
				return err
			}
		}
		return nil
	}
	waiting := make(chan error, 1)
	go func() { waiting <- chat(waiter, busy) }()
	deadline := time.After(time.Minute) // bounds a broken test only
	for queued := false; !queued; {
		waiter.running.mu.Lock()
		queued = len(waiter.running.waiting["alice"]) > 0
		waiter.running.mu.Unlock()
		select {
		case err := <-waiting:
			waiter.running.release("alice")
			t.Fatalf("the turn of %s ended (%v) before it waited for a running slot", busy, err)
		case <-deadline:
			waiter.running.release("alice")
			t.Fatalf("the turn of %s never waited for a running slot", busy)
		case <-time.After(time.Millisecond):
		}
	}
	err = chat(pruner, "unlisted") // prunes the list
	waiter.running.release("alice")
	if err != nil {
		t.Fatalf("turn of the unlisted conversation: %v", err)
	}
	if err := <-waiting; err != nil {
		t.Fatalf("the turn of %s: %v", busy, err)
	}
	st, err := pruner.convs.Store().Load(t.Context(), scoped("alice", busy), 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Last != 4 {
		t.Errorf("%s, whose turn waited on another instance as the list was pruned, keeps %d messages; want 4 (its history and the turn's exchange)", busy, st.Last)
	}
	if _, err := pruner.convIndex.items.Get(t.Context(), pruner.convIndex.namespace("alice"), busy, false); err != nil {
		t.Errorf("%s's entry: %v; want it listed", busy, err)
	}
}

// TestDeleteEndsTurnWaitingForForget: a turn of a conversation the list is
// forgetting waits for the forget tracked, so DELETE of the conversation
// ends it at once with ErrUnknownConversation (it does not wait for the
// slow forget, nor does the turn run afterwards on the deleted
// conversation), and nothing of the conversation is left once the forget
// ends.
func TestDeleteEndsTurnWaitingForForget(t *testing.T) {
	b, err := New(t.Context(), Config{DataDir: t.TempDir(), Offline: true, MaxRunningTurns: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	fillList(t, b)
	recs, err := b.convIndex.records(t.Context(), b.convIndex.namespace("alice"))
	if err != nil {
		t.Fatal(err)
	}
	gone := recs[len(recs)-1].Key // the least recently used: pruned
	slow := &blockingDelete{Store: b.convs.Store(), thread: scoped("alice", gone),
		deleting: make(chan bool, 1), release: make(chan struct{})}
	b.forgetWithList(slow)
	b.convIndex.forgetWait = time.Hour // only release ends the delete
	released := false
	release := func() {
		if !released {
			released = true
			close(slow.release)
		}
	}
	defer release()
	alice := WithPrincipal(t.Context(), "alice")
	chat := func(id string, errs chan<- error) {
		for _, err := range b.Chat(alice, Request{ConversationID: id, Message: "Hello again!"}) {
			if err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}
	pruning := make(chan error, 1)
	go chat("unlisted", pruning)        // prunes the list
	deadline := time.After(time.Minute) // bounds a broken test only
	select {
	case <-slow.deleting:
	case err := <-pruning:
		t.Fatalf("the pruning turn ended (%v) before deleting %s", err, gone)
	case <-deadline:
		t.Fatal("the pruning turn did not delete " + gone)
	}
	waiting := make(chan error, 1)
	go chat(gone, waiting)
	for tracked := false; !tracked; {
		b.turnsRun.mu.Lock()
		for _, th := range b.turnsRun.cancels {
			tracked = tracked || th == slow.thread
		}
		b.turnsRun.mu.Unlock()
		select {
		case err := <-waiting:
			t.Fatalf("the turn of %s, being forgotten, ended (%v) before it was tracked; want it to wait", gone, err)
		case <-deadline:
			t.Fatalf("the turn of %s was never tracked", gone)
		case <-time.After(time.Millisecond):
		}
	}
	if err := b.DeleteConversation(alice, gone); err != nil {
		t.Fatalf("DELETE of %s while the list forgets it and a turn of it waits: %v", gone, err)
	}
	// The forget is still held: the turn ends because DELETE cancelled it.
	select {
	case err := <-waiting:
		if !errors.Is(err, ErrUnknownConversation) {
			t.Errorf("the waiting turn of %s after DELETE: %v; want ErrUnknownConversation", gone, err)
		}
	case <-deadline:
		t.Fatalf("the turn of %s, waiting for the forget, did not end on DELETE", gone)
	}
	release()
	if err := <-pruning; err != nil {
		t.Errorf("the pruning turn: %v", err)
	}
	if st, err := b.convs.Store().Load(t.Context(), slow.thread, 0); err != nil || st.Last != 0 {
		t.Errorf("%s, deleted, keeps %d messages (%v); want none", gone, st.Last, err)
	}
	if _, err := b.convIndex.items.Get(t.Context(), b.convIndex.namespace("alice"), gone, false); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("%s's entry after DELETE: %v; want it gone", gone, err)
	}
}
