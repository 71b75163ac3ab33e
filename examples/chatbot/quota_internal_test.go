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
// conversations fill the in-memory conversation list while it holds more
// than its fair share makes room from its own least recently used
// entries, not from the other principals', even when theirs are older:
// 450 principals with 4 conversations each, bob's 5 the oldest of all,
// and mallory starting conversation after conversation, with the default
// evict batch.
func TestConversationIndexFullEvictsOwnFirst(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	const capacity = 2000
	x := conversationIndex{
		items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{MaxRecords: capacity, Now: func() time.Time { return now }}),
		log:   zap.NewNop(),
	}
	ctx := context.Background()
	touch := func(principal, id string) {
		now = now.Add(time.Second)
		x.touch(ctx, principal, id, "message of "+id, false)
	}
	for i := range 5 {
		touch("bob", fmt.Sprint("b", i)) // the oldest entries
	}
	for i := range 4 {
		for p := range 450 {
			touch(fmt.Sprintf("u%03d", p), fmt.Sprint("c", i))
		}
	}
	const flood = 1000
	for i := range flood {
		touch("mallory", fmt.Sprint("m", i))
	}
	for principal, want := range map[string]int{"bob": 5, "u000": 4, "u449": 4} {
		list, err := x.list(ctx, principal)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != want {
			t.Errorf("%s's list after mallory filled the store: %d entries, want all %d", principal, len(list), want)
		}
	}
	mallory, err := x.list(ctx, "mallory")
	if err != nil {
		t.Fatal(err)
	}
	if len(mallory) == 0 || mallory[0].ID != fmt.Sprint("m", flood-1) {
		t.Errorf("mallory's list: %d entries, want her newest conversation first", len(mallory))
	}
}

// TestConversationIndexFullKeepsFairShare: with 500 principals holding a
// few conversations each, the store full, a principal holding no more
// than its share that starts one more conversation keeps its earlier
// ones: the least recently used entries of all principals make room.
func TestConversationIndexFullKeepsFairShare(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	const capacity, principals, each = 10_000, 500, 20
	x := conversationIndex{
		items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{MaxRecords: capacity, Now: func() time.Time { return now }}),
		log:   zap.NewNop(),
	}
	ctx := context.Background()
	touch := func(principal, id string) {
		now = now.Add(time.Second)
		x.touch(ctx, principal, id, "message of "+id, false)
	}
	for i := range each {
		for p := range principals - 1 {
			touch(fmt.Sprintf("u%03d", p), fmt.Sprint("c", i))
		}
	}
	for i := range each {
		touch("alice", fmt.Sprint("a", i)) // the store is full after the last
	}
	touch("alice", "new")
	alice, err := x.list(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(alice) != each+1 || alice[0].ID != "new" {
		t.Errorf("alice's list after her new conversation found the store full: %d entries, newest %v; want her %d earlier ones and the new one first",
			len(alice), alice[:min(1, len(alice))], each)
	}
	// The least recently used entries went: the first two rounds of the
	// others' conversations (998 entries) and the first two of the third.
	for principal, want := range map[string]int{"u000": each - 3, "u001": each - 3, "u002": each - 2, "u498": each - 2} {
		u, err := x.list(ctx, principal)
		if err != nil {
			t.Fatal(err)
		}
		if len(u) != want {
			t.Errorf("%s's list: %d entries, want %d (its least recently used forgotten)", principal, len(u), want)
		}
	}
}
