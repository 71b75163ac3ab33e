package chatbot

import (
	"context"
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
