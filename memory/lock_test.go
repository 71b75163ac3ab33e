package memory_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/agentgraph/agentgraph/memory"
)

// TestLockReservesOneConversation checks that Lock makes a second turn of
// the same conversation wait for the first, leaves other conversations
// free, and gives up when the waiter's context ends.
func TestLockReservesOneConversation(t *testing.T) {
	synctest.Test(t, testLockReservesOneConversation)
}

func testLockReservesOneConversation(t *testing.T) {
	c, err := memory.NewConversations(memory.ConversationConfig{Store: memory.NewInMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	unlock, err := c.Lock(ctx, "conv-a")
	if err != nil {
		t.Fatal(err)
	}
	// Another conversation is not held up.
	other, err := c.Lock(ctx, "conv-b")
	if err != nil {
		t.Fatalf("Lock of another conversation: %v", err)
	}
	other()
	// The same one waits; a cancelled wait holds nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Lock(cctx, "conv-a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock of a held conversation with a cancelled context: %v, want context.Canceled", err)
	}
	got := make(chan func())
	go func() {
		u, err := c.Lock(ctx, "conv-a")
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	synctest.Wait() // the waiter is blocked in Lock, or has returned
	select {
	case <-got:
		t.Fatal("a second Lock of a held conversation returned before unlock")
	default:
	}
	unlock()
	(<-got)()
	if _, err := c.Lock(ctx, ""); !errors.Is(err, memory.ErrEmptyID) {
		t.Fatalf("Lock(\"\"): %v, want ErrEmptyID", err)
	}
}
