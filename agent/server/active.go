package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// This file holds the bound on a principal's active runs
// (Config.MaxActiveRuns): a run's creation counts the principal's pending
// and running runs in the store, and the creations of one principal on
// one instance pass through a gate of the principal's, so that the count
// and the creation together hold the bound however many creations go on
// at once.
//
// Most creations go through the gate together (shared): each counts the
// store, then, when it decides, adds to its count every other creation
// that was under way on this instance at some moment since it began to
// count, created or not yet (their runs may be missing from its count).
// That sum is never below the runs there will be once this creation
// commits, so a creation that fits by it fits. One that does not fit by
// it, but fits by its count alone, counts again alone (exclusive): it
// waits for the creations under way to end, keeps the others out, and
// decides by its count, which then misses nothing of this instance's. A
// creation is refused only when its count alone (the runs stored at one
// moment) leaves no room.
//
// Across instances the gates are separate and the store's count sees
// the runs the other instances stored, not those they are creating: a
// principal may pass the bound by the creations under way on the other
// instances at the moment of a count, at most maxCreating per instance.
// A run an interrupt or rollback cancels counts as replaced at once,
// though it stays active in the store until its graph stops: meanwhile
// the principal's active runs may exceed the bound by those runs.
//
// A creation enters the gate once it holds its thread's locks, and
// leaves it before it waits for one (see createRun): nothing in the gate
// waits for a thread's lock, so an exclusive creation, which waits for
// the gate to empty while holding its thread's locks, waits for no one
// that waits for it, and creations queued on a busy thread hold no place.
// (A creation in the gate may wait for its principal's thread-count lock
// in saveThread, whose holders wait for no gate.)

// maxCreating bounds the creations of one principal's runs that go on at
// once on one instance when the store counts them ([OwnerCounter] and
// Config.MaxActiveRuns set); more wait for their turn. It bounds how far
// instances that share a store may pass Config.MaxActiveRuns together.
const maxCreating = 16

// errRecount is the refusal of a shared creation that fits the bound by
// its count but not with the creations under way beside it: newRun
// counts again exclusively and creates the run then.
var errRecount = errors.New("server: count the active runs again, alone")

// activeGate is a principal's gate on this instance. Its fields are
// guarded by Server.amu.
type activeGate struct {
	live     int           // creations in the gate, shared or exclusive
	started  uint64        // creations that entered the gate, ever
	excl     bool          // an exclusive creation is in the gate
	waiting  int           // creations waiting to enter
	exclWait int           // exclusive creations among them
	changed  chan struct{} // closed when a creation leaves while some wait
}

// activeTicket is a creation's place in its principal's gate, with what
// it counted. The zero activeTicket (s nil) is a creation that is not
// bounded: check admits its run.
type activeTicket struct {
	s      *Server
	who    string
	g      *activeGate // nil when out of the gate
	excl   bool
	n      int    // the principal's active runs counted in the store
	inRead bool   // the store counts in the creation's read (CountingClaimer), which sets n
	fit    bool   // the run was found to fit: check admits it
	live0  int    // creations in the gate when the count began, this one included
	start0 uint64 // g.started then
}

// activeVerdict is what a ticket's count says of a new run.
type activeVerdict int

const (
	fits     activeVerdict = iota // the run fits the bound
	mayFit                        // it fits by the count alone: count again, exclusively
	overflow                      // it does not fit
)

// enterActive takes who's place in the gate (exclusive or shared) for
// ticket t and counts who's active runs in the store; with inRead, it
// does not count: the run's creation counts in its read
// ([CountingClaimer]) and sets the ticket's count before it checks it.
// It leaves t zero when runs are not bounded (Config.MaxActiveRuns
// negative, or a store that is not an [OwnerCounter]). The caller leaves
// the ticket once the run is created, or not.
func (s *Server) enterActive(ctx context.Context, t *activeTicket, who string, excl, inRead bool) error {
	*t = activeTicket{}
	if _, ok := s.store.(OwnerCounter); !ok || s.cfg.MaxActiveRuns < 0 {
		return nil
	}
	t.s, t.who, t.excl, t.inRead = s, who, excl, inRead
	return t.count(ctx)
}

// count enters the gate and counts, unless the creation's read counts
// (inRead). A count made after the ticket entered the gate, as the
// read's, misses none of the creations verdict adds to it: those under
// way since the ticket entered.
func (t *activeTicket) count(ctx context.Context) error {
	if err := t.enter(ctx); err != nil {
		return err
	}
	if t.inRead {
		return nil
	}
	n, err := t.s.store.(OwnerCounter).CountActiveRuns(ctx, t.who)
	if err != nil {
		t.leave()
		return err
	}
	t.n = n
	return nil
}

// recount leaves the gate and enters it again exclusively, counting
// again: a run that fits by the ticket's count alone, but not beside the
// creations under way with it, is decided by a count that misses none of
// this instance's.
func (t *activeTicket) recount(ctx context.Context) error {
	t.leave()
	t.excl = true
	return t.count(ctx)
}

// enter waits for the ticket's place in its principal's gate: a shared
// one while no exclusive creation holds it or waits for it and fewer
// than maxCreating are in it; an exclusive one once no other is in it.
func (t *activeTicket) enter(ctx context.Context) error {
	s := t.s
	s.amu.Lock()
	defer s.amu.Unlock()
	if s.gates == nil {
		s.gates = map[string]*activeGate{}
	}
	g := s.gates[t.who]
	if g == nil {
		g = &activeGate{}
		s.gates[t.who] = g
	}
	free := func() bool {
		if t.excl {
			return g.live == 0
		}
		return !g.excl && g.exclWait == 0 && g.live < maxCreating
	}
	if !free() {
		g.waiting++
		if t.excl {
			g.exclWait++
		}
		for !free() {
			if g.changed == nil {
				g.changed = make(chan struct{})
			}
			ch := g.changed
			s.amu.Unlock()
			var err error
			select {
			case <-ch:
			case <-ctx.Done():
				err = ctx.Err()
			}
			s.amu.Lock()
			if err != nil {
				g.waiting--
				if t.excl {
					g.exclWait--
				}
				wakeGate(g)
				s.dropGate(t.who, g)
				return err // t.g stays nil: the ticket holds no place to leave
			}
		}
		g.waiting--
		if t.excl {
			g.exclWait--
		}
	}
	t.g = g // only once admitted: leave gives back a place the ticket holds
	g.live++
	g.started++
	g.excl = t.excl
	t.live0, t.start0 = g.live, g.started
	return nil
}

// wakeGate wakes the creations waiting for gate g; the caller holds
// Server.amu.
func wakeGate(g *activeGate) {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// dropGate forgets gate g of who once nothing is in it or waits for it;
// the caller holds Server.amu.
func (s *Server) dropGate(who string, g *activeGate) {
	if g.live == 0 && g.waiting == 0 && s.gates[who] == g {
		delete(s.gates, who)
	}
}

// leave gives the ticket's place back, if it holds one.
func (t *activeTicket) leave() {
	if t.g == nil {
		return
	}
	s, g := t.s, t.g
	s.amu.Lock()
	defer s.amu.Unlock()
	g.live--
	if t.excl {
		g.excl = false
	}
	wakeGate(g)
	s.dropGate(t.who, g)
	t.g = nil
}

// decided records that the run was found to fit with nothing to
// replace, where it has nothing to replace (a stateless run's new
// thread): the check made then holds, since the creations that begin
// after it count this one as under way.
func (t *activeTicket) decided() { t.fit = true }

// verdict says whether a new run fits the bound once it replaces
// replaced of the principal's active runs (those its multitask_strategy
// interrupt or rollback cancels): by the count and the creations under
// way beside it since the count began (each may have added a run the
// count missed); by the count alone, when the ticket is exclusive.
func (t *activeTicket) verdict(replaced int) activeVerdict {
	max := t.s.cfg.MaxActiveRuns
	base := t.n - replaced
	others := 0
	if !t.excl {
		t.s.amu.Lock()
		others = t.live0 - 1 + int(t.g.started-t.start0)
		t.s.amu.Unlock()
	}
	switch {
	case base+others < max:
		return fits
	case base < max && !t.excl:
		return mayFit
	}
	return overflow
}

// check returns nil when a new run that replaces replaced active runs
// fits the bound, errRecount when the ticket must count again
// exclusively to know, and the 429 otherwise. A zero ticket admits
// every run.
func (t *activeTicket) check(replaced int) error {
	if t.s == nil || t.fit {
		return nil
	}
	switch t.verdict(replaced) {
	case fits:
		return nil
	case mayFit:
		return errRecount
	}
	msg := fmt.Sprintf("%v: %d runs of this principal are pending or running (Config.MaxActiveRuns)", ErrLimit, t.n)
	if replaced > 0 {
		msg += fmt.Sprintf(", %d of them on this thread, which this run's multitask_strategy cancels", replaced)
	}
	return &requestError{status: http.StatusTooManyRequests, msg: msg + "; wait for some to end, or cancel them, before creating more"}
}
