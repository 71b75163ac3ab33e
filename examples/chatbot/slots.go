package chatbot

import (
	"context"
	"sync"
)

// runSlots bounds the turns that run at once (Config.MaxRunningTurns) and
// shares them fairly among principals: a free slot goes to the principal
// that waits and holds the fewest slots, and among those to the one that
// last had a slot (or, new to the queue, arrived) the longest ago; each principal's own turns get slots in the order they
// asked. A principal with many turns waiting therefore delays another's
// turn by at most one turn per slot, not by all of its own.
type runSlots struct {
	mu      sync.Mutex
	max     int
	used    int
	held    map[string]int           // principal -> slots held
	waiting map[string][]*slotWaiter // principal -> its waiters, in order
	served  map[string]uint64        // principal -> when it last had a slot, or joined the queue
	seq     uint64
}

// slotWaiter is one turn waiting for a slot: ready is closed when granted.
type slotWaiter struct {
	ready   chan struct{}
	granted bool
}

// newRunSlots returns a bound of n slots.
func newRunSlots(n int) *runSlots {
	return &runSlots{max: n, held: map[string]int{}, waiting: map[string][]*slotWaiter{}, served: map[string]uint64{}}
}

// acquire waits for a slot for principal until ctx ends.
func (r *runSlots) acquire(ctx context.Context, principal string) error {
	if err := ctx.Err(); err != nil { // an ended turn takes no slot
		return err
	}
	r.mu.Lock()
	if r.used < r.max && len(r.waiting) == 0 {
		r.grant(principal)
		r.mu.Unlock()
		return nil
	}
	w := &slotWaiter{ready: make(chan struct{})}
	if _, ok := r.served[principal]; !ok {
		// A principal new to the queue goes after those already in it
		// (among those holding as many slots): it arrived last.
		r.seq++
		r.served[principal] = r.seq
	}
	r.waiting[principal] = append(r.waiting[principal], w)
	r.dispatch() // a slot may be free while others wait to be handed theirs
	r.mu.Unlock()
	select {
	case <-w.ready:
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Err() == nil {
		return nil
	}
	if w.granted { // granted as ctx ended: hand it on
		r.put(principal)
		return ctx.Err()
	}
	q := r.waiting[principal]
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(r.waiting, principal)
		r.forget(principal)
	} else {
		r.waiting[principal] = q
	}
	return ctx.Err()
}

// release gives back a slot principal held.
func (r *runSlots) release(principal string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.put(principal)
}

func (r *runSlots) put(principal string) {
	r.used--
	if r.held[principal]--; r.held[principal] <= 0 {
		delete(r.held, principal)
	}
	// It had a slot until now: its next turn goes after those of the
	// principals that waited meanwhile.
	r.seq++
	r.served[principal] = r.seq
	r.forget(principal)
	r.dispatch()
}

// forget drops what is known of a principal that neither holds nor waits
// for a slot.
func (r *runSlots) forget(principal string) {
	if r.held[principal] == 0 && len(r.waiting[principal]) == 0 {
		delete(r.served, principal)
	}
}

func (r *runSlots) grant(principal string) {
	r.used++
	r.held[principal]++
	r.seq++
	r.served[principal] = r.seq
}

// dispatch hands free slots to waiters, fairly among principals.
func (r *runSlots) dispatch() {
	for r.used < r.max && len(r.waiting) > 0 {
		var next string
		found := false
		for p := range r.waiting {
			if !found || r.held[p] < r.held[next] || r.held[p] == r.held[next] && r.served[p] < r.served[next] {
				next, found = p, true
			}
		}
		q := r.waiting[next]
		w := q[0]
		if len(q) == 1 {
			delete(r.waiting, next)
		} else {
			q[0] = nil
			r.waiting[next] = q[1:]
		}
		r.grant(next)
		w.granted = true
		close(w.ready)
	}
}

// waiters counts the turns waiting for a slot.
func (r *runSlots) waiters() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.waiting {
		n += len(q)
	}
	return n
}
