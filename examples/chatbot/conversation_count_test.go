package chatbot_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/graph"
)

// turnErr runs one turn of ctx's principal and returns its error.
func turnErr(ctx context.Context, bot *chatbot.Bot, conv string) error {
	for _, err := range bot.Chat(ctx, chatbot.Request{ConversationID: conv, Message: "Hello!"}) {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestNewConversationsCountedAtOnce: a principal's new conversation is
// counted against MaxConversations as it is admitted, so that another
// new conversation started while the first has not yet run its graph is
// refused, in memory, with SQLite and with PostgreSQL.
func TestNewConversationsCountedAtOnce(t *testing.T) {
	stores := map[string]func(t *testing.T) chatbot.Config{
		"memory": func(t *testing.T) chatbot.Config { return chatbot.Config{} },
		"sqlite": func(t *testing.T) chatbot.Config { return chatbot.Config{DataDir: t.TempDir()} },
		"postgres": func(t *testing.T) chatbot.Config {
			dsn, schema := testPostgres(t)
			return chatbot.Config{Postgres: dsn, PostgresSchema: schema}
		},
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			// The first turn to start its graph waits there until
			// released: it has been admitted, and has not run.
			var first atomic.Bool
			entered, release := make(chan struct{}), make(chan struct{})
			cfg := store(t)
			cfg.Offline, cfg.MaxConversations = true, 1
			cfg.MaxRunningTurns = -1 // the second turn takes no slot the first holds
			cfg.Hooks = graph.Hooks{NodeStart: func(ctx context.Context, ti graph.TaskInfo) context.Context {
				if ti.Node == chatbot.NodeInitialize && first.CompareAndSwap(false, true) {
					close(entered)
					select {
					case <-release:
					case <-ctx.Done():
					}
				}
				return ctx
			}}
			bot, _ := serve(t, cfg, 10*time.Second)
			alice := chatbot.WithPrincipal(t.Context(), "alice")
			done := make(chan error, 1)
			go func() { done <- turnErr(alice, bot, "a") }()
			select {
			case <-entered:
			case err := <-done:
				t.Fatalf("the first turn ended before its graph started: %v", err)
			}
			err := turnErr(alice, bot, "b")
			close(release)
			if err := <-done; err != nil {
				t.Fatalf("the first conversation's turn: %v", err)
			}
			if !errors.Is(err, chatbot.ErrConversationLimit) {
				t.Errorf("a second new conversation while the first was starting: %v; want ErrConversationLimit (MaxConversations 1)", err)
			}
			list, err := bot.Conversations(alice)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].ID != "a" {
				t.Errorf("alice's conversations: %+v; want a alone", list)
			}
		})
	}
}

// TestFailedNewConversationNotCounted: a new conversation whose turn
// fails after its graph started, with nothing stored, is neither listed
// nor counted against MaxConversations: another may start. Its entry
// stayed once the graph's initialize had run.
func TestFailedNewConversationNotCounted(t *testing.T) {
	var failed atomic.Bool
	cfg := chatbot.Config{Offline: true, MaxConversations: 1}
	cfg.Hooks = graph.Hooks{NodeStart: func(ctx context.Context, ti graph.TaskInfo) context.Context {
		if ti.Node == chatbot.NodeSupervisor && failed.CompareAndSwap(false, true) {
			c, cancel := context.WithCancel(ctx)
			cancel() // the first turn fails in its supervisor
			return c
		}
		return ctx
	}}
	bot, _ := serve(t, cfg, 10*time.Second)
	alice := chatbot.WithPrincipal(t.Context(), "alice")
	if err := turnErr(alice, bot, "a"); err == nil {
		t.Fatal("the failing turn: no error")
	}
	if list, err := bot.Conversations(alice); err != nil || len(list) != 0 {
		t.Errorf("alice's conversations after the failed turn: %+v, %v; want none", list, err)
	}
	if err := turnErr(alice, bot, "b"); err != nil {
		t.Errorf("a new conversation after the failed one: %v; want it admitted (MaxConversations 1)", err)
	}
}
