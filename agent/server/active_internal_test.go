package server

import (
	"context"
	"errors"
	"testing"
	"time"
)

// enter is enterActive with a new ticket.
func enter(ctx context.Context, s *Server, who string, excl bool) (*activeTicket, error) {
	t := new(activeTicket)
	if err := s.enterActive(ctx, t, who, excl, false); err != nil {
		return nil, err
	}
	return t, nil
}

// gateState returns who's gate's live and waiting creations (0, 0 when
// it has no gate).
func gateState(s *Server, who string) (live, waiting int) {
	s.amu.Lock()
	defer s.amu.Unlock()
	if g := s.gates[who]; g != nil {
		return g.live, g.waiting
	}
	return 0, 0
}

// waitGate polls until cond holds of who's gate; the minute is a failure
// guard, not a timing assumption.
func waitGate(t *testing.T, s *Server, who string, what string, cond func(live, waiting int) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond(gateState(s, who)) {
		if time.Now().After(deadline) {
			live, waiting := gateState(s, who)
			t.Fatalf("waiting for %s: gate has %d in, %d waiting", what, live, waiting)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestActiveGate: a principal's gate lets maxCreating shared creations in
// at once, and the next waits until one leaves; an exclusive creation
// waits until none is in, and the shared ones that come meanwhile wait
// behind it; a creation whose request ends while it waits leaves the
// gate as it was; the gate is forgotten once empty. Another principal's
// gate is apart.
func TestActiveGate(t *testing.T) {
	s, err := New(Config{MaxActiveRuns: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	ctx := t.Context()
	var in []*activeTicket
	for range maxCreating {
		tk, err := enter(ctx, s, "alice", false)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, tk)
	}
	if _, err := enter(ctx, s, "bob", false); err != nil {
		t.Fatalf("bob beside alice's %d creations: %v", maxCreating, err)
	}
	entered := make(chan *activeTicket)
	go func() {
		tk, err := enter(ctx, s, "alice", false)
		if err != nil {
			t.Error(err)
		}
		entered <- tk
	}()
	waitGate(t, s, "alice", "the 17th shared creation to wait", func(live, waiting int) bool { return live == maxCreating && waiting == 1 })
	in[0].leave()
	in[0] = <-entered
	// A shared creation whose request ends while it waits.
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error)
	go func() {
		_, err := enter(cctx, s, "alice", false)
		gaveUp <- err
	}()
	waitGate(t, s, "alice", "the creation to wait", func(live, waiting int) bool { return waiting == 1 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a wait whose request ended: %v; want context.Canceled", err)
	}
	if live, waiting := gateState(s, "alice"); live != maxCreating || waiting != 0 {
		t.Fatalf("after a wait given up: %d in, %d waiting; want %d, 0", live, waiting, maxCreating)
	}
	// An exclusive creation waits for all of them, and a shared one that
	// comes after it waits behind it.
	excl := make(chan *activeTicket)
	go func() {
		tk, err := enter(ctx, s, "alice", true)
		if err != nil {
			t.Error(err)
		}
		excl <- tk
	}()
	waitGate(t, s, "alice", "the exclusive creation to wait", func(live, waiting int) bool { return waiting == 1 })
	for _, tk := range in[1:] {
		tk.leave()
	}
	go func() {
		tk, err := enter(ctx, s, "alice", false)
		if err != nil {
			t.Error(err)
		}
		entered <- tk
	}()
	waitGate(t, s, "alice", "the shared creation to wait", func(live, waiting int) bool { return waiting == 2 })
	in[0].leave()
	ex := <-excl
	if live, waiting := gateState(s, "alice"); live != 1 || waiting != 1 {
		t.Fatalf("with the exclusive creation in: %d in, %d waiting; want 1, 1", live, waiting)
	}
	ex.leave()
	(<-entered).leave()
	s.amu.Lock()
	_, kept := s.gates["alice"]
	s.amu.Unlock()
	if kept {
		t.Error("alice's gate is kept once empty; want it forgotten")
	}
}

// TestActiveVerdict: a shared ticket adds to its count the creations in
// the gate when it began to count and those that entered since, whether
// they left or not; an exclusive one decides by its count alone; runs
// its strategy replaces make room.
func TestActiveVerdict(t *testing.T) {
	s, err := New(Config{MaxActiveRuns: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	ctx := t.Context()
	a, _ := enter(ctx, s, "p", false)
	b, _ := enter(ctx, s, "p", false)
	if v := a.verdict(0); v != fits {
		t.Errorf("count 0, one other in: %v; want fits", v)
	}
	c, _ := enter(ctx, s, "p", false)
	b.leave()
	c.leave()
	// a: count 0, b in when it began, c entered since: 0+2+1 = 3 runs.
	if v := a.verdict(0); v != fits {
		t.Errorf("count 0, two others: %v; want fits", v)
	}
	a.n = 1
	if v := a.verdict(0); v != mayFit {
		t.Errorf("count 1, two others: %v; want mayFit", v)
	}
	if v := a.verdict(1); v != fits {
		t.Errorf("count 1, two others, one run replaced: %v; want fits", v)
	}
	a.n = 3
	if v := a.verdict(0); v != overflow {
		t.Errorf("count 3: %v; want overflow", v)
	}
	a.leave()
	x, _ := enter(ctx, s, "p", true)
	x.n = 2
	if v := x.verdict(0); v != fits {
		t.Errorf("exclusive, count 2: %v; want fits", v)
	}
	x.n = 3
	if err := x.check(0); err == nil || errors.Is(err, errRecount) {
		t.Errorf("exclusive, count 3: %v; want the 429", err)
	}
	if err := x.check(1); err != nil {
		t.Errorf("exclusive, count 3, one run replaced: %v; want nil", err)
	}
	x.leave()
}

// TestActiveRecountGivenUp: a creation whose exclusive recount is given
// up (its request ended while it waited for the others to leave) holds
// no place in the gate: leaving it afterwards, as newRun does, changes
// nothing of the gate, whose creations in it stay counted and whose
// exclusive holder keeps its place alone.
func TestActiveRecountGivenUp(t *testing.T) {
	s, err := New(Config{MaxActiveRuns: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	ctx := t.Context()
	other, err := enter(ctx, s, "p", false)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := enter(ctx, s, "p", false)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error)
	go func() { gaveUp <- tk.recount(cctx) }()
	waitGate(t, s, "p", "the recount to wait for the other creation", func(live, waiting int) bool { return live == 1 && waiting == 1 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a recount whose request ended: %v; want context.Canceled", err)
	}
	tk.leave() // newRun's deferred leave
	if live, waiting := gateState(s, "p"); live != 1 || waiting != 0 {
		t.Fatalf("after the given-up recount left: %d in, %d waiting; want the other creation alone (1, 0)", live, waiting)
	}
	// The other leaves, and an exclusive creation takes the gate: a
	// second leave of the given-up ticket must not free its place.
	other.leave()
	ex, err := enter(ctx, s, "p", true)
	if err != nil {
		t.Fatal(err)
	}
	tk.leave()
	shared := make(chan *activeTicket, 1)
	go func() {
		in, err := enter(ctx, s, "p", false)
		if err != nil {
			t.Error(err)
		}
		shared <- in
	}()
	waitGate(t, s, "p", "a shared creation to wait behind the exclusive one", func(live, waiting int) bool { return waiting == 1 })
	if live, _ := gateState(s, "p"); live != 1 {
		t.Fatalf("with the exclusive creation in: %d in; want 1", live)
	}
	ex.leave()
	(<-shared).leave()
	if live, waiting := gateState(s, "p"); live != 0 || waiting != 0 {
		t.Fatalf("once all left: %d in, %d waiting; want 0, 0", live, waiting)
	}
}
