package chatbot

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// waitFor polls cond until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("never: %s", what)
		case <-time.After(time.Millisecond):
		}
	}
}

// TestEndedTurnTakesNoSlot: a question's handler that outlives its turn
// (the turn ended while the question waited) takes no running slot when
// its answer comes, and a context that has ended gets no slot either: the
// bot's slots all stay free for the next turns.
func TestEndedTurnTakesNoSlot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := newRunSlots(1)
	slot := &turnSlot{slots: r, principal: "ann"}
	if err := slot.take(ctx); err != nil {
		t.Fatal(err)
	}
	answered := slot.asking() // a question waits; the slot is given up
	slot.end()                // the turn ends first
	if err := answered(ctx); err == nil {
		t.Error("the answer of an ended turn took a slot without an error")
	}
	if r.used != 0 || len(r.held) != 0 {
		t.Fatalf("an ended turn holds a slot: used %d, held %v", r.used, r.held)
	}

	ended, stop := context.WithCancel(ctx)
	stop()
	if err := r.acquire(ended, "ann"); err == nil {
		t.Error("a context that has ended got a slot")
	}
	if r.used != 0 || len(r.held) != 0 || len(r.served) != 0 {
		t.Fatalf("after a refused acquire: used %d, held %v, served %v", r.used, r.held, r.served)
	}
	if err := r.acquire(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	r.release("bob")
}

// TestReturningPrincipalQueuesLast: a principal that had no slot and no
// waiter, and comes back, goes after a principal that has waited since
// before it came (holding as many slots): a backlog is not overtaken by
// principals that come and go.
func TestReturningPrincipalQueuesLast(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := newRunSlots(1)
	w := newSlotWaiters(t, ctx)
	if err := r.acquire(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	w.queue(r, "bob", "bob2")
	w.queue(r, "alice", "alice1")
	r.release("bob") // bob just had the slot: alice first
	if p := w.next(); p != "alice1" {
		t.Fatalf("the slot went to %s, want alice1", p)
	}
	w.queue(r, "dave", "dave1") // dave comes after bob2 waits
	r.release("alice")          // alice now neither holds nor waits
	if p := w.next(); p != "bob2" {
		t.Fatalf("the slot went to %s, want bob2 (waiting since before dave came)", p)
	}
	w.queue(r, "alice", "alice2") // alice comes back after dave
	r.release("bob")
	if p := w.next(); p != "dave1" {
		t.Fatalf("the slot went to %s, want dave1", p)
	}
	r.release("dave")
	if p := w.next(); p != "alice2" {
		t.Fatalf("the slot went to %s, want alice2", p)
	}
	r.release("alice")
	checkReleased(t, r)
}

// TestAnsweredQuestionNoLongerPending: once a question is answered it
// counts no more against MaxPendingQuestions (nor makes Close end its
// turn), even while its turn waits for a running slot to go on.
func TestAnsweredQuestionNoLongerPending(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b := &Bot{cfg: Config{AnswerTimeout: time.Minute, MaxPendingQuestions: 1}, log: zap.NewNop(), turns: map[*turnEntry]struct{}{}}
	asked := make(chan struct{}, 1)
	table := operator.NewElicitations(operator.ReporterFunc(func(context.Context, operator.Report) error {
		asked <- struct{}{}
		return nil
	}))
	tctx, tcancel := context.WithCancelCause(ctx)
	defer tcancel(nil)
	turn := &turnEntry{principal: "ann", elicit: table, cancel: tcancel}
	b.turns[turn] = struct{}{}
	r := newRunSlots(1)
	slot := &turnSlot{slots: r, principal: "ann"}
	if err := slot.take(ctx); err != nil {
		t.Fatal(err)
	}
	defer slot.end()
	em := event.NewEmitter(event.EmitterConfig{})
	defer em.Close()
	q := questionAsker{bot: b, em: em, turn: turn, slot: slot}
	done := make(chan error, 1)
	go func() {
		_, err := q.Elicit(tctx, elicit.Request{ElicitationID: "q1", Message: "which?"})
		done <- err
	}()
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the question was never asked")
	}
	if err := r.acquire(ctx, "bob"); err != nil { // another turn runs meanwhile
		t.Fatal(err)
	}
	if err := table.Respond(elicit.Response{ElicitationID: "q1", Action: elicit.Accept}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the answered turn waits for a slot", func() bool { return r.waiters() == 1 })
	b.mu.Lock()
	n := b.pendingQuestions("ann")
	b.mu.Unlock()
	if n != 0 {
		t.Errorf("an answered question still counts as pending: %d", n)
	}
	r.release("bob")
	if err := <-done; err != nil {
		t.Fatalf("the answered question: %v", err)
	}
}
