package chatbot

import (
	"context"
	"fmt"
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
	x, touch := touchedIndex(3, 1, nil)
	ctx := context.Background()
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

// TestConversationIndexPrunes keeps a principal's list at
// maxListedConversations: the least recently used ones go, a list at the
// cap keeps every entry, and the store never holds more than
// maxListedConversations + pruneSlack records of one principal.
func TestConversationIndexPrunes(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	x := conversationIndex{
		items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{Now: func() time.Time { return now }}),
		log:   zap.NewNop(),
	}
	ctx := context.Background()
	count := func() int {
		list, err := x.list(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	for i := range maxListedConversations {
		now = now.Add(time.Second)
		x.touch(ctx, "alice", fmt.Sprintf("c%03d", i), "hello", false)
	}
	if n := count(); n != maxListedConversations {
		t.Fatalf("list at the cap has %d entries, want %d", n, maxListedConversations)
	}
	for i := range 3 {
		now = now.Add(time.Second)
		x.touch(ctx, "alice", fmt.Sprintf("new%d", i), "hello", false)
	}
	list, err := x.list(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != maxListedConversations {
		t.Fatalf("list has %d entries, want %d", len(list), maxListedConversations)
	}
	for _, c := range list {
		if c.ID == "c000" || c.ID == "c001" || c.ID == "c002" {
			t.Errorf("least recently used %s still listed", c.ID)
		}
	}
	if list[0].ID != "new2" {
		t.Errorf("most recent is %s, want new2", list[0].ID)
	}
	stored := func() int {
		recs, err := x.items.Search(ctx, memory.ItemQuery{Prefix: x.namespace("alice"), Limit: memory.MaxSearchLimit})
		if err != nil {
			t.Fatal(err)
		}
		return len(recs)
	}
	for i := range 2*pruneSlack + 7 {
		now = now.Add(time.Second)
		x.touch(ctx, "alice", fmt.Sprintf("more%03d", i), "hello", false)
		if n := stored(); n > maxListedConversations+pruneSlack {
			t.Fatalf("after %d more conversations the store holds %d records, want at most %d", i+1, n, maxListedConversations+pruneSlack)
		}
	}
	if n := stored(); n >= maxListedConversations+pruneSlack {
		t.Errorf("store holds %d records after pruning, want fewer than %d", n, maxListedConversations+pruneSlack)
	}
	list, err = x.list(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != maxListedConversations || list[0].ID != fmt.Sprintf("more%03d", 2*pruneSlack+6) {
		t.Errorf("list has %d entries, newest %s; want %d, newest more%03d", len(list), list[0].ID, maxListedConversations, 2*pruneSlack+6)
	}
}

// TestConversationIndexTitles titles a conversation by its first message:
// a later turn of a conversation with history keeps the title, and a
// conversation without history (its first turn was cancelled and left
// nothing) takes the title of the turn that starts it.
func TestConversationIndexTitles(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	x := conversationIndex{
		items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{Now: func() time.Time { return now }}),
		log:   zap.NewNop(),
	}
	ctx := context.Background()
	titles := func() []string {
		list, err := x.list(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range list {
			out = append(out, c.ID+": "+c.Title)
		}
		return out
	}
	steps := []struct {
		id, message string
		started     bool
		want        []string
	}{
		{"c1", "How much is the Team plan?", false, []string{"c1: How much is the Team plan?"}},
		{"c1", "And the Business plan?", true, []string{"c1: How much is the Team plan?"}},
		{"c2", "Cancelled before it stored anything", false, []string{"c2: Cancelled before it stored anything", "c1: How much is the Team plan?"}},
		{"c2", "Book a demo", false, []string{"c2: Book a demo", "c1: How much is the Team plan?"}},
		{"c1", "Thanks", true, []string{"c1: How much is the Team plan?", "c2: Book a demo"}},
	}
	for i, s := range steps {
		now = now.Add(time.Second)
		x.touch(ctx, "alice", s.id, s.message, s.started)
		if diff := cmp.Diff(s.want, titles()); diff != "" {
			t.Errorf("after step %d (-want +got):\n%s", i, diff)
		}
	}
}

// countingItems counts the Search calls made on its memory.Items.
type countingItems struct {
	memory.Items
	searches int
}

func (c *countingItems) Search(ctx context.Context, q memory.ItemQuery) ([]memory.Record, error) {
	c.searches++
	return c.Items.Search(ctx, q)
}

// TestConversationIndexProbesOncePerTen checks whether a principal's list
// needs pruning at its first new conversation and then once per
// probeEvery, not at each: 100 new conversations of one principal cost 10
// queries, while a second principal is checked at its first.
func TestConversationIndexProbesOncePerTen(t *testing.T) {
	items := &countingItems{Items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{})}
	x := conversationIndex{items: items, log: zap.NewNop()}
	ctx := context.Background()
	for i := range 100 {
		x.touch(ctx, "alice", fmt.Sprintf("c%03d", i), "hello", false)
	}
	if items.searches != 100/probeEvery {
		t.Errorf("100 new conversations made %d searches, want %d", items.searches, 100/probeEvery)
	}
	x.touch(ctx, "alice", "c000", "hello", true) // a known one: no check
	x.touch(ctx, "bob", "b1", "hello", false)
	if items.searches != 100/probeEvery+1 {
		t.Errorf("%d searches after bob's first conversation, want %d", items.searches, 100/probeEvery+1)
	}
}
