package chatbot

import (
	"context"
	"fmt"
	"slices"
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
	const capacity = 2000
	x, touch := touchedIndex(capacity, 0, nil)
	ctx := context.Background()
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
	const capacity, principals, each = 10_000, 500, 20
	x, touch := touchedIndex(capacity, 0, nil)
	ctx := context.Background()
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

// TestConversationIndexFullEvictsOverShareFirst: a principal within its
// fair share whose new conversation finds the in-memory conversation list
// full makes room from the excess of the principals over their share
// before anyone's least recently used entries: 450 principals with 4
// conversations each, bob's 4 the oldest of all, mallory holding 196 (the
// store full), and carol, who holds none, starting a conversation.
func TestConversationIndexFullEvictsOverShareFirst(t *testing.T) {
	const capacity = 2000
	x, touch := touchedIndex(capacity, 0, nil)
	ctx := context.Background()
	for i := range 4 {
		touch("bob", fmt.Sprint("b", i)) // the oldest entries
	}
	for i := range 4 {
		for p := range 450 {
			touch(fmt.Sprintf("u%03d", p), fmt.Sprint("c", i))
		}
	}
	const flood = capacity - 4 - 450*4
	for i := range flood {
		touch("mallory", fmt.Sprint("m", i))
	}
	touch("carol", "new")
	// The share: 2000 records over 452 principals.
	const share = capacity / 452
	for principal, want := range map[string]int{"carol": 1, "bob": 4, "u000": 4, "u449": 4, "mallory": share} {
		list, err := x.list(ctx, principal)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != want {
			t.Errorf("%s's list after carol's new conversation found the store full: %d entries, want %d", principal, len(list), want)
		}
		if principal == "mallory" && len(list) > 0 && list[0].ID != fmt.Sprint("m", flood-1) {
			t.Errorf("mallory's list starts with %s, want her newest conversation", list[0].ID)
		}
	}
}

// touchedIndex returns a conversation list, making room batch records at
// a time (zero: the default), in an in-memory item store of capacity
// records (wrapped by wrap, when not nil), and touch, with which principal
// uses its conversation id, as a turn does, a second after the last use.
func touchedIndex(capacity, batch int, wrap func(*memory.InMemoryItems) memory.Items) (*conversationIndex, func(principal, id string)) {
	now := time.Unix(1_000_000, 0)
	in := memory.NewInMemoryItems(memory.InMemoryItemsConfig{MaxRecords: capacity, Now: func() time.Time { return now }})
	var items memory.Items = in
	if wrap != nil {
		items = wrap(in)
	}
	x := &conversationIndex{items: items, log: zap.NewNop(), evictBatch: batch}
	touch := func(principal, id string) {
		now = now.Add(time.Second)
		x.touch(context.Background(), principal, id, "message of "+id, false)
	}
	return x, touch
}

// racingItems is an in-memory item store in which another turn acts at a
// chosen moment while the conversation list makes room: afterDelete runs
// at the first Put of the conversation "new" after a Delete, and
// afterScan after the first search of every principal's records.
type racingItems struct {
	*memory.InMemoryItems
	afterDelete, afterScan func()
	deleted                bool
}

func (r *racingItems) Delete(ctx context.Context, ns []string, key string) error {
	r.deleted = true
	return r.InMemoryItems.Delete(ctx, ns, key)
}

func (r *racingItems) Put(ctx context.Context, rec memory.Record) error {
	if rec.Key == "new" && r.deleted && r.afterDelete != nil {
		f := r.afterDelete
		r.afterDelete = nil
		f()
	}
	return r.InMemoryItems.Put(ctx, rec)
}

func (r *racingItems) Search(ctx context.Context, q memory.ItemQuery) ([]memory.Record, error) {
	recs, err := r.InMemoryItems.Search(ctx, q)
	if len(q.Prefix) == 2 && r.afterScan != nil {
		f := r.afterScan
		r.afterScan = nil
		f()
	}
	return recs, err
}

// TestConversationIndexFullRacingTurns: making room in the full
// conversation list while other turns use it. A slot freed for a new
// conversation that another turn's new conversation takes first is made
// again, so the new conversation is listed; an entry that a turn used
// after the scan that found it least recently used is not forgotten.
func TestConversationIndexFullRacingTurns(t *testing.T) {
	ctx := context.Background()
	setup := func(batch int) (*conversationIndex, *racingItems, func(principal, id string)) {
		var items *racingItems
		x, touch := touchedIndex(10, batch, func(in *memory.InMemoryItems) memory.Items {
			items = &racingItems{InMemoryItems: in}
			return items
		})
		for _, p := range []string{"ann", "ben"} {
			for i := range 5 {
				touch(p, fmt.Sprint(p, i))
			}
		}
		return x, items, touch
	}
	listed := func(x *conversationIndex, principal, id string) bool {
		list, err := x.list(ctx, principal)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(list, func(c ConversationSummary) bool { return c.ID == id })
	}

	x, items, touch := setup(1)
	items.afterDelete = func() { touch("eve", "stolen") } // takes the slot made for carol's
	touch("carol", "new")
	if !listed(x, "eve", "stolen") || !listed(x, "carol", "new") {
		t.Errorf("after eve's new conversation took the slot made for carol's: eve's listed %v, carol's %v; want both",
			listed(x, "eve", "stolen"), listed(x, "carol", "new"))
	}

	x, items, touch = setup(2)
	items.afterScan = func() { touch("ann", "ann0") } // the least recently used, used again
	touch("carol", "new")
	if !listed(x, "ann", "ann0") || !listed(x, "carol", "new") {
		t.Errorf("after ann used her least recently used conversation during the scan: it is listed %v, carol's new one %v; want both",
			listed(x, "ann", "ann0"), listed(x, "carol", "new"))
	}
	if listed(x, "ann", "ann1") {
		t.Error("ann's second least recently used conversation is listed, want it forgotten to make room")
	}
}

// TestConversationIndexFullShareFoundAgain: the fair share found by an
// earlier scan of the full conversation list falls as principals join; a
// principal over the new share but within the earlier one that finds the
// list full forgets its own least recently used entry, found by a new
// scan, rather than everyone's: mallory fills a list of 14 (share 7 of
// 14 over 2), then two new principals and ann fill it again (share 3).
func TestConversationIndexFullShareFoundAgain(t *testing.T) {
	x, touch := touchedIndex(14, 0, nil)
	ctx := context.Background()
	for i := range 12 {
		touch("mallory", fmt.Sprint("m", i))
	}
	touch("ann", "a0")
	touch("ann", "a1")
	touch("mallory", "m12") // full: mallory keeps her share, 7, and the new one
	touch("p1", "p1")
	touch("p2", "p2")
	touch("ann", "a2")
	touch("ann", "a3") // full again
	touch("ann", "a4")
	for principal, want := range map[string][]string{
		"ann": {"a4", "a3", "a2", "a1"}, "p1": {"p1"}, "p2": {"p2"}, "mallory": {"m12", "m11", "m10", "m9", "m8", "m7", "m6", "m5"},
	} {
		list, err := x.list(ctx, principal)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range list {
			got = append(got, c.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s's list: %v, want %v", principal, got, want)
		}
	}
}
