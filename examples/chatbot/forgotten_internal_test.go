package chatbot

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/memory"
)

// TestFullMemoryListForgetsItsConversations: without DataDir or
// Postgres, a conversation whose entry the full list forgets is deleted
// with it, so that every conversation kept counts against
// MaxConversations; the others keep their messages.
func TestFullMemoryListForgetsItsConversations(t *testing.T) {
	b, err := New(context.Background(), Config{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	b.convIndex.items = memory.NewInMemoryItems(memory.InMemoryItemsConfig{MaxRecords: 2})
	b.convIndex.evictBatch = 1
	alice := WithPrincipal(t.Context(), "alice")
	for _, id := range []string{"a1", "a2", "a3"} { // a3 finds the list full
		for _, err := range b.Chat(alice, Request{ConversationID: id, Message: "Hello!"}) {
			if err != nil {
				t.Fatalf("turn of %s: %v", id, err)
			}
		}
	}
	list, err := b.Conversations(alice)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	if len(ids) != 2 || ids[0] != "a3" || ids[1] != "a2" {
		t.Fatalf("alice's list: %v; want a3, a2 (a1 forgotten)", ids)
	}
	for id, want := range map[string]int64{"a1": 0, "a2": 2, "a3": 2} {
		st, err := b.convs.Store().Load(t.Context(), scoped("alice", id), 0)
		if err != nil {
			t.Fatal(err)
		}
		if st.Last != want {
			t.Errorf("%s keeps %d messages; want %d (a forgotten conversation is deleted with its entry)", id, st.Last, want)
		}
	}
}

// TestFullMemoryListKeepsBusyConversations: a conversation whose turn
// waits to run is not forgotten when the full list makes room: its
// entry and its messages stay, and the turn goes on with its history;
// another conversation makes the room. The forgotten conversation was
// deleted under the waiting turn, which then ran on an empty history.
func TestFullMemoryListKeepsBusyConversations(t *testing.T) {
	b, err := New(context.Background(), Config{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	b.convIndex.items = memory.NewInMemoryItems(memory.InMemoryItemsConfig{MaxRecords: 2})
	b.convIndex.evictBatch = 2
	alice := WithPrincipal(t.Context(), "alice")
	chat := func(id string) error {
		for _, err := range b.Chat(alice, Request{ConversationID: id, Message: "Hello!"}) {
			if err != nil {
				return err
			}
		}
		return nil
	}
	for _, id := range []string{"a1", "a2"} {
		if err := chat(id); err != nil {
			t.Fatalf("turn of %s: %v", id, err)
		}
	}
	// a1's next turn waits for its conversation's lock, held here.
	unlock, err := b.convs.Lock(t.Context(), scoped("alice", "a1"))
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() { waiting <- chat("a1") }()
	for tracked := false; !tracked; {
		b.turnsRun.mu.Lock()
		for _, th := range b.turnsRun.cancels {
			tracked = tracked || th == scoped("alice", "a1")
		}
		b.turnsRun.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	if err := chat("a3"); err != nil { // finds the list full
		unlock()
		t.Fatalf("turn of a3: %v", err)
	}
	unlock()
	if err := <-waiting; err != nil {
		t.Fatalf("a1's waiting turn: %v", err)
	}
	for id, want := range map[string]int64{"a1": 4, "a2": 0, "a3": 2} {
		st, err := b.convs.Store().Load(t.Context(), scoped("alice", id), 0)
		if err != nil {
			t.Fatal(err)
		}
		if st.Last != want {
			t.Errorf("%s keeps %d messages; want %d (a conversation with a waiting turn is kept, another forgotten)", id, st.Last, want)
		}
	}
	list, err := b.Conversations(alice)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	if len(ids) != 2 || ids[0] != "a1" || ids[1] != "a3" {
		t.Fatalf("alice's list: %v; want a1, a3 (a2 forgotten)", ids)
	}
}

// refusingItems is a conversation list whose every Put fails.
type refusingItems struct{ memory.Items }

func (refusingItems) Put(context.Context, memory.Record) error {
	return errors.New("refusing items: put refused")
}

// TestUnlistedNewConversationFails: a new conversation the list cannot
// take fails its turn, storing nothing: it ran on, stored, neither
// listed nor counted against MaxConversations.
func TestUnlistedNewConversationFails(t *testing.T) {
	b, err := New(context.Background(), Config{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	b.convIndex.items = refusingItems{memory.NewInMemoryItems(memory.InMemoryItemsConfig{})}
	var turnErr error
	for _, err := range b.Chat(WithPrincipal(t.Context(), "alice"), Request{ConversationID: "c1", Message: "Hello!"}) {
		if err != nil {
			turnErr = err
		}
	}
	if turnErr == nil || !strings.Contains(turnErr.Error(), "put refused") {
		t.Errorf("the unlisted conversation's turn: %v; want the list's error", turnErr)
	}
	st, err := b.convs.Store().Load(t.Context(), scoped("alice", "c1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Last != 0 {
		t.Errorf("the unlisted conversation keeps %d messages; want none", st.Last)
	}
}
