package chatbot

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

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
			value, _ := json.Marshal(listedConversation{Title: "Hello!"})
			// One more listed conversation than the list holds before it
			// prunes, each with an exchange stored.
			var ids []string
			for i := range maxListedConversations + pruneSlack - probeEvery + 1 {
				id := fmt.Sprintf("c%03d", i)
				ids = append(ids, id)
				if _, err := b.convs.Store().Append(ctx, scoped("alice", id),
					memory.Message{Role: "user", Content: "Hello!"}, memory.Message{Role: "assistant", Content: "Hi."}); err != nil {
					t.Fatal(err)
				}
				if err := b.convIndex.items.Put(ctx, memory.Record{Namespace: ns, Key: id, Value: value}); err != nil {
					t.Fatal(err)
				}
			}
			// A stored conversation whose entry is missing: its turn lists
			// it, a new entry, which prunes the list.
			if _, err := b.convs.Store().Append(ctx, scoped("alice", "unlisted"),
				memory.Message{Role: "user", Content: "Hello!"}, memory.Message{Role: "assistant", Content: "Hi."}); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, "unlisted")
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
