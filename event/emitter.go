package event

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"iter"
	"sync"
	"time"

	"go.uber.org/zap"
)

// EmitterConfig configures an [Emitter]. The zero value is usable.
type EmitterConfig struct {
	// RequestID is stamped on every event. Empty means a random 128-bit hex
	// id, which Emitter.RequestID returns.
	RequestID string
	// Buffer is how many events may wait for the consumer. Zero means 256;
	// it is at least 1.
	Buffer int
	// MaxWait bounds how long Emit waits for room in a full buffer. When it
	// passes, Emit returns an error wrapping ErrSlowConsumer and the emitter
	// fails: every later Emit returns that error and the consumer receives it
	// after the events already queued. Zero means Emit waits as long as its
	// context allows (the usual choice: the request's deadline bounds it).
	MaxWait time.Duration
	// Bus, if set, also receives every emitted event, for observers such as
	// audit logs and dashboards, as Emit accepts it (so including progress
	// events that are later coalesced for the consumer). Emit publishes after
	// queuing, so events of concurrent producers may reach the bus in an order
	// other than their sequence numbers'. A failed publish is logged, not
	// returned.
	Bus Bus
	// Logger receives warnings. Nil means no logging.
	Logger *zap.Logger
	// Now returns the time stamped on events. Nil means time.Now.
	Now func() time.Time
}

// EmitterStats counts what an [Emitter] did.
type EmitterStats struct {
	// Emitted is the number of events accepted by Emit.
	Emitted uint64
	// Delivered is the number of events handed to the consumer.
	Delivered uint64
	// Coalesced is the number of progress events replaced by a newer one
	// while the buffer was full. Emitted = Delivered + Coalesced + Buffered
	// (+ events discarded when the consumer stopped early).
	Coalesced uint64
	// Waits is the number of Emit calls that found the buffer full and waited.
	Waits uint64
	// Buffered is the number of events waiting for the consumer now.
	Buffered int
}

// Emitter carries the events of one request, in order, from any number of
// producers to one consumer through a bounded buffer.
//
// When the buffer is full, Emit of a payload that is a [Coalescer] with a
// non-empty key (a progress report) replaces the newest queued event of the
// same type and key, and the newer event's Coalesced field says how many it
// replaced; any other event (results, answers, errors) is never dropped: the
// producer waits for room. Waiting rather than failing is the default because
// a momentarily slow reader (a congested network link) should slow the run
// down, not throw away its work; the wait ends when Emit's context ends, when
// the consumer stops reading (ErrConsumerGone), or, if MaxWait is set, with
// ErrSlowConsumer. The order the consumer sees is the order Emit returned in,
// minus coalesced events.
//
// Emitter starts no goroutines. Close it when the run is over; the consumer
// then reads what is left and its loop ends.
type Emitter struct {
	cfg       EmitterConfig
	requestID string
	now       func() time.Time

	mu        sync.Mutex
	q         ring
	seq       uint64
	closed    bool
	closeErr  error // reported to the consumer after the last event
	failErr   error // returned by Emit once set
	consuming bool
	gone      bool
	waiters   int
	room      chan struct{} // closed when the consumer makes room, then replaced
	ready     chan struct{} // capacity 1: "the queue changed"
	stats     EmitterStats
}

// NewEmitter returns an emitter for one request.
func NewEmitter(cfg EmitterConfig) *Emitter {
	if cfg.Buffer <= 0 {
		cfg.Buffer = 256
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	e := &Emitter{cfg: cfg, requestID: cfg.RequestID, now: cfg.Now,
		q: newRing(cfg.Buffer), room: make(chan struct{}), ready: make(chan struct{}, 1)}
	if e.requestID == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		e.requestID = hex.EncodeToString(b[:])
	}
	if e.now == nil {
		e.now = time.Now
	}
	return e
}

// RequestID returns the request id stamped on the emitter's events.
func (e *Emitter) RequestID() string { return e.requestID }

// Emit validates p, numbers and stamps it, and queues it for the consumer.
// It returns a *ValidationError for a bad payload, ErrClosed after Close,
// ErrConsumerGone when the consumer stopped reading, and the context's error
// if ctx ends while it waits for room (ctx bounds only that wait, so a run
// that was cancelled can still report it while there is room). Emit is safe
// for concurrent use.
func (e *Emitter) Emit(ctx context.Context, p Payload) error {
	if p == nil {
		return fmt.Errorf("event: Emit of a nil payload; pass a struct that implements Payload")
	}
	if v, ok := p.(Validator); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	ev, err := e.enqueue(ctx, p)
	if err != nil {
		return err
	}
	if e.cfg.Bus != nil {
		if err := e.cfg.Bus.Publish(ctx, ev); err != nil {
			e.cfg.Logger.Warn("event: publishing to the bus failed", zap.String("request_id", e.requestID), zap.String("type", string(ev.Type)), zap.Error(err))
		}
	}
	return nil
}

func (e *Emitter) enqueue(ctx context.Context, p Payload) (Event, error) {
	t := p.EventType()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	waited := false
	e.mu.Lock()
	for {
		if err := e.unusable(); err != nil {
			e.mu.Unlock()
			return Event{}, err
		}
		if e.q.n < e.q.cap() {
			break
		}
		if key := coalesceKey(p); key != "" {
			if i, ok := e.findCoalescable(t, key); ok {
				old := e.q.remove(i)
				ev := e.stamp(t, p)
				ev.Coalesced = old.Coalesced + 1
				e.stats.Coalesced++
				e.q.push(ev)
				e.mu.Unlock()
				e.signal()
				return ev, nil
			}
		}
		if !waited {
			waited = true
			e.stats.Waits++
		}
		room := e.room
		e.waiters++
		e.mu.Unlock()
		var expired <-chan time.Time
		if e.cfg.MaxWait > 0 {
			if timer == nil {
				timer = time.NewTimer(e.cfg.MaxWait)
			}
			expired = timer.C
		}
		var waitErr error
		timedOut := false
		select {
		case <-room:
		case <-ctx.Done():
			waitErr = ctx.Err()
		case <-expired:
			timedOut = true
			waitErr = fmt.Errorf("%w: no room in the %d-event buffer of request %s after %v; the consumer is not reading", ErrSlowConsumer, e.q.cap(), e.requestID, e.cfg.MaxWait)
		}
		e.mu.Lock()
		e.waiters--
		if waitErr != nil {
			if timedOut && e.failErr == nil {
				e.failErr = waitErr
				e.closeErr = waitErr
				e.closed = true
				e.cfg.Logger.Warn("event: emitter failed", zap.String("request_id", e.requestID), zap.Error(waitErr))
				e.wakeProducers()
				e.mu.Unlock()
				e.signal()
				return Event{}, waitErr
			}
			e.mu.Unlock()
			return Event{}, waitErr
		}
	}
	ev := e.stamp(t, p)
	e.q.push(ev)
	e.mu.Unlock()
	e.signal()
	return ev, nil
}

// unusable returns why Emit cannot queue now. e.mu is held.
func (e *Emitter) unusable() error {
	switch {
	case e.failErr != nil:
		return e.failErr
	case e.gone:
		return ErrConsumerGone
	case e.closed:
		return ErrClosed
	}
	return nil
}

// stamp numbers and times an event. e.mu is held.
func (e *Emitter) stamp(t Type, p Payload) Event {
	e.seq++
	e.stats.Emitted++
	return Event{Type: t, RequestID: e.requestID, Seq: e.seq, Time: e.now(), Payload: p}
}

// findCoalescable returns the index of the newest queued event of type t
// and coalescing key key. e.mu is held.
func (e *Emitter) findCoalescable(t Type, key string) (int, bool) {
	for i := e.q.n - 1; i >= 0; i-- {
		q := e.q.at(i)
		if q.Type == t && coalesceKey(q.Payload) == key {
			return i, true
		}
	}
	return 0, false
}

// coalesceKey returns p's [Coalescer] key, or "" when p is not one.
func coalesceKey(p Payload) string {
	if c, ok := p.(Coalescer); ok {
		return c.CoalesceKey()
	}
	return ""
}

func (e *Emitter) signal() {
	select {
	case e.ready <- struct{}{}:
	default:
	}
}

// wakeProducers wakes every Emit waiting for room. e.mu is held.
func (e *Emitter) wakeProducers() {
	if e.waiters > 0 {
		close(e.room)
		e.room = make(chan struct{})
	}
}

// Close ends the stream: Emit returns ErrClosed from now on, and the
// consumer's loop ends after the events already queued. Close is idempotent.
func (e *Emitter) Close() { e.CloseWithError(nil) }

// CloseWithError is Close, and the consumer receives err after the events
// already queued. Only the first Close or CloseWithError counts.
func (e *Emitter) CloseWithError(err error) {
	e.mu.Lock()
	if !e.closed {
		e.closed = true
		e.closeErr = err
		e.wakeProducers()
	}
	e.mu.Unlock()
	e.signal()
}

// Stats returns the emitter's counters.
func (e *Emitter) Stats() EmitterStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.stats
	s.Buffered = e.q.n
	return s
}

// Events returns the emitter's events in order, for its one consumer. The
// sequence ends after Close once the buffer is empty, yielding the error
// given to CloseWithError (or ErrSlowConsumer) if there is one. If ctx ends
// first it yields ctx's error and stops. Breaking out of the loop or ctx
// ending marks the consumer gone: queued events are discarded and Emit
// returns ErrConsumerGone. A second consumer receives ErrConsumerActive.
func (e *Emitter) Events(ctx context.Context) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		e.mu.Lock()
		if e.consuming {
			e.mu.Unlock()
			yield(Event{}, ErrConsumerActive)
			return
		}
		e.consuming = true
		e.mu.Unlock()
		finished := false
		defer func() {
			if !finished {
				e.abandon()
			}
		}()
		var batch []Event
		for {
			e.mu.Lock()
			for e.q.n == 0 && !e.closed {
				e.mu.Unlock()
				select {
				case <-e.ready:
				case <-ctx.Done():
					yield(Event{}, ctx.Err())
					return
				}
				e.mu.Lock()
			}
			if e.q.n == 0 {
				err := e.closeErr
				e.mu.Unlock()
				finished = true
				if err != nil {
					yield(Event{}, err)
				}
				return
			}
			batch = e.q.drain(batch[:0], true)
			e.stats.Delivered += uint64(len(batch))
			e.wakeProducers()
			e.mu.Unlock()
			for i := range batch {
				if !yield(batch[i], nil) {
					return
				}
				batch[i] = Event{}
			}
			if ctx.Err() != nil {
				yield(Event{}, ctx.Err())
				return
			}
		}
	}
}

// abandon records that the consumer stopped reading.
func (e *Emitter) abandon() {
	e.mu.Lock()
	e.gone = true
	e.q.drain(nil, false)
	e.wakeProducers()
	e.mu.Unlock()
}

// ring is a fixed-capacity FIFO of events that also supports removal from
// the middle (for coalescing).
// ring is a FIFO of at most max events. Its buffer starts small and
// doubles as it fills, so that an emitter with a large Buffer whose
// consumer keeps up costs little.
type ring struct {
	buf  []Event
	head int
	n    int
	max  int
}

// ringStart is the initial size of a ring's buffer.
const ringStart = 16

func newRing(capacity int) ring {
	return ring{buf: make([]Event, min(capacity, ringStart)), max: capacity}
}

func (r *ring) cap() int { return r.max }

func (r *ring) at(i int) *Event { return &r.buf[(r.head+i)%len(r.buf)] }

// push appends ev; the ring must hold fewer than cap() events.
func (r *ring) push(ev Event) {
	if r.n == len(r.buf) {
		buf := make([]Event, min(2*len(r.buf), r.max))
		for i := range r.n {
			buf[i] = *r.at(i)
		}
		r.buf, r.head = buf, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = ev
	r.n++
}

// remove deletes the i-th queued event, shifting the later ones forward.
func (r *ring) remove(i int) Event {
	old := *r.at(i)
	for j := i; j < r.n-1; j++ {
		*r.at(j) = *r.at(j + 1)
	}
	*r.at(r.n - 1) = Event{}
	r.n--
	return old
}

// drain empties the ring, appending its events to dst in order when keep is
// set.
func (r *ring) drain(dst []Event, keep bool) []Event {
	for i := 0; i < r.n; i++ {
		ev := r.at(i)
		if keep {
			dst = append(dst, *ev)
		}
		*ev = Event{}
	}
	r.head, r.n = 0, 0
	return dst
}
