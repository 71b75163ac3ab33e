package chatbot

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRunSlotsOrder: a free slot goes to the waiting principal that holds
// the fewest slots, then to the one served least recently; a principal's
// own turns go in the order they asked; a waiter whose context ends leaves
// the queue without taking a slot.
func TestRunSlotsOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := newRunSlots(2)
	for _, p := range []string{"bob", "bob"} {
		if err := r.acquire(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan string, 8)
	queue := func(r *runSlots, p string, n int) {
		t.Helper()
		want := r.waiters() + 1
		go func() {
			if err := r.acquire(ctx, p); err == nil {
				got <- p + string(rune('0'+n))
			}
		}()
		for r.waiters() != want {
			select {
			case <-ctx.Done():
				t.Fatal("a waiter never queued")
			case <-time.After(time.Millisecond):
			}
		}
	}
	queue(r, "bob", 1)
	queue(r, "bob", 2)
	gone, leave := context.WithCancel(ctx)
	leftErr := make(chan error, 1)
	go func() { leftErr <- r.acquire(gone, "carol") }()
	for r.waiters() != 3 {
		time.Sleep(time.Millisecond)
	}
	leave()
	if err := <-leftErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled waiter: %v", err)
	}
	queue(r, "alice", 1)
	queue(r, "alice", 2)
	next := func() string {
		t.Helper()
		select {
		case p := <-got:
			return p
		case <-ctx.Done():
			t.Fatal("no slot handed out")
			return ""
		}
	}
	// A free slot goes to whoever holds fewer.
	var order []string
	r.release("bob")
	order = append(order, next()) // alice 0 against bob 1: alice1
	r.release("bob")
	order = append(order, next()) // bob 0 against alice 1: bob1
	r.release("alice")
	order = append(order, next()) // alice 0 against bob 1: alice2
	r.release("bob")
	order = append(order, next()) // bob2
	want := []string{"alice1", "bob1", "alice2", "bob2"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("slots went to %v, want %v", order, want)
		}
	}
	r.release("alice")
	r.release("bob")

	if r.used != 0 || len(r.held) != 0 || len(r.waiting) != 0 || len(r.served) != 0 {
		t.Errorf("after every release: used %d, held %v, waiting %v, served %v", r.used, r.held, r.waiting, r.served)
	}

	// Between principals holding as many, the one served least recently:
	// bob, just served, queued first, but alice goes first.
	r = newRunSlots(1)
	if err := r.acquire(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	queue(r, "bob", 3)
	queue(r, "alice", 3)
	r.release("bob")
	if p := next(); p != "alice3" {
		t.Fatalf("the slot went to %s, want alice3", p)
	}
	r.release("alice")
	if p := next(); p != "bob3" {
		t.Fatalf("the slot went to %s, want bob3", p)
	}
	r.release("bob")
	if r.used != 0 || len(r.held) != 0 || len(r.waiting) != 0 || len(r.served) != 0 {
		t.Errorf("after every release: used %d, held %v, waiting %v, served %v", r.used, r.held, r.waiting, r.served)
	}
}
