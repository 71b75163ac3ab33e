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
	w := newSlotWaiters(t, ctx)
	w.queue(r, "bob", "bob1")
	w.queue(r, "bob", "bob2")
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
	w.queue(r, "alice", "alice1")
	w.queue(r, "alice", "alice2")
	// A free slot goes to whoever holds fewer.
	var order []string
	r.release("bob")
	order = append(order, w.next()) // alice 0 against bob 1: alice1
	r.release("bob")
	order = append(order, w.next()) // bob 0 against alice 1: bob1
	r.release("alice")
	order = append(order, w.next()) // alice 0 against bob 1: alice2
	r.release("bob")
	order = append(order, w.next()) // bob2
	want := []string{"alice1", "bob1", "alice2", "bob2"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("slots went to %v, want %v", order, want)
		}
	}
	r.release("alice")
	r.release("bob")

	checkReleased(t, r)

	// Between principals holding as many, the one served least recently:
	// bob, just served, queued first, but alice goes first.
	r = newRunSlots(1)
	if err := r.acquire(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	w.queue(r, "bob", "bob3")
	w.queue(r, "alice", "alice3")
	r.release("bob")
	if p := w.next(); p != "alice3" {
		t.Fatalf("the slot went to %s, want alice3", p)
	}
	r.release("alice")
	if p := w.next(); p != "bob3" {
		t.Fatalf("the slot went to %s, want bob3", p)
	}
	r.release("bob")
	checkReleased(t, r)
}

// slotWaiters has principals wait for run slots and tells, in order, which
// of them got one.
type slotWaiters struct {
	t   *testing.T
	ctx context.Context
	got chan string
}

func newSlotWaiters(t *testing.T, ctx context.Context) *slotWaiters {
	return &slotWaiters{t: t, ctx: ctx, got: make(chan string, 8)}
}

// queue has the principal p wait for a slot of r, as the waiter name, and
// returns once it waits.
func (w *slotWaiters) queue(r *runSlots, p, name string) {
	w.t.Helper()
	want := r.waiters() + 1
	go func() {
		if err := r.acquire(w.ctx, p); err == nil {
			w.got <- name
		}
	}()
	waitFor(w.t, w.ctx, name+" queued", func() bool { return r.waiters() == want })
}

// next returns the name of the next waiter that got a slot.
func (w *slotWaiters) next() string {
	w.t.Helper()
	select {
	case name := <-w.got:
		return name
	case <-w.ctx.Done():
		w.t.Fatal("no slot handed out")
		return ""
	}
}

// checkReleased fails t unless r holds, and has queued, nothing.
func checkReleased(t *testing.T, r *runSlots) {
	t.Helper()
	if r.used != 0 || len(r.held) != 0 || len(r.waiting) != 0 || len(r.served) != 0 {
		t.Errorf("after every release: used %d, held %v, waiting %v, served %v", r.used, r.held, r.waiting, r.served)
	}
}
