package chatbot

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/memory"
)

// TestConversationIndexFullEvictsOwnFirst: a principal whose new
// conversations fill the in-memory conversation list makes room from its
// own least recently used entries (keeping its most recent ones), not
// from another principal's, even when those are older.
func TestConversationIndexFullEvictsOwnFirst(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	const capacity = 20
	x := conversationIndex{
		items:      memory.NewInMemoryItems(memory.InMemoryItemsConfig{MaxRecords: capacity, Now: func() time.Time { return now }}),
		log:        zap.NewNop(),
		evictBatch: 1,
	}
	ctx := context.Background()
	touch := func(principal, id string) {
		now = now.Add(time.Second)
		x.touch(ctx, principal, id, "message of "+id, false)
	}
	for i := range 5 {
		touch("bob", fmt.Sprint("b", i)) // the oldest entries
	}
	for i := range 3 * capacity {
		touch("mallory", fmt.Sprint("m", i))
	}
	bob, err := x.list(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if len(bob) != 5 {
		t.Errorf("bob's list after mallory filled the store: %d entries, want his 5", len(bob))
	}
	mallory, err := x.list(ctx, "mallory")
	if err != nil {
		t.Fatal(err)
	}
	if len(mallory) == 0 || mallory[0].ID != fmt.Sprint("m", 3*capacity-1) {
		t.Errorf("mallory's list: %v, want her newest conversation first", mallory)
	}
}
