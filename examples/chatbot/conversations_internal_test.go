package chatbot

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/memory"
)

// TestConversationIndexFullEvicts fills an in-memory conversation list:
// a new conversation still gets listed, and the least recently used
// entry (of another principal) makes room for it.
func TestConversationIndexFullEvicts(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	x := conversationIndex{
		items:      memory.NewInMemoryItems(memory.InMemoryItemsConfig{MaxRecords: 3, Now: clock}),
		log:        zap.NewNop(),
		evictBatch: 1,
	}
	ctx := context.Background()
	touch := func(principal, id string) {
		now = now.Add(time.Second)
		x.touch(ctx, principal, id, "message of "+id)
	}
	touch("alice", "a1") // least recently used
	touch("bob", "b1")
	touch("alice", "a2")
	touch("carol", "c1") // the store is full

	ids := func(principal string) []string {
		list, err := x.list(ctx, principal)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, c := range list {
			out = append(out, c.ID)
		}
		return out
	}
	for principal, want := range map[string][]string{"alice": {"a2"}, "bob": {"b1"}, "carol": {"c1"}} {
		if diff := cmp.Diff(want, ids(principal)); diff != "" {
			t.Errorf("%s's list (-want +got):\n%s", principal, diff)
		}
	}
}
