// Package pgnotify wakes waiters of this module's PostgreSQL stores on
// NOTIFY: a [Hub] LISTENs on one channel, on a connection taken from its
// pool (so the pool's connect hooks apply) and kept apart from it, held
// while someone waits and for [IdleListen] after the last waiter left,
// and wakes the waiters of the tag each
// notification carries (its payload). Waiters must not rely on it alone:
// a notification sent while the connection is down is lost, so they also
// poll, at once while [Hub.Listening] is false.
package pgnotify

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// IdleListen is how long a [Hub] keeps listening after its last waiter
// left, so that waiters coming and going reuse one connection instead of
// opening one each.
const IdleListen = 5 * time.Second

// Hub dispatches the notifications of one channel to waiters by tag. It
// is safe for concurrent use; its zero value is not: use [New].
type Hub struct {
	pool    *pgxpool.Pool
	channel string
	log     *zap.Logger

	mu        sync.Mutex
	waiters   map[string]map[chan struct{}]struct{}
	n         int
	stop      context.CancelFunc // of the running listener
	listening bool
	closed    bool
	wg        sync.WaitGroup
	idle      time.Duration // IdleListen; shorter in tests
	idleGen   uint64        // bumped by each subscriber, so an older idle timer does nothing
	idleTimer *time.Timer
	connects  int // listener connections opened, for tests
}

// New returns a hub for channel; nothing runs until a waiter subscribes.
func New(pool *pgxpool.Pool, channel string, log *zap.Logger) *Hub {
	if log == nil {
		log = zap.NewNop()
	}
	return &Hub{pool: pool, channel: channel, log: log, waiters: map[string]map[chan struct{}]struct{}{}, idle: IdleListen}
}

// Subscribe returns a channel that receives (coalesced) when a
// notification with payload tag arrives, when [Hub.Wake] is called with
// tag, and when the listener (re)connects (a notification may have been
// missed). The listener starts with the first subscriber and stops
// IdleListen after the last left (at once on Close); call cancel once
// when done.
func (h *Hub) Subscribe(tag string) (wake <-chan struct{}, cancel func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	m := h.waiters[tag]
	if m == nil {
		m = map[chan struct{}]struct{}{}
		h.waiters[tag] = m
	}
	m[ch] = struct{}{}
	h.n++
	h.idleGen++
	if h.idleTimer != nil {
		h.idleTimer.Stop()
		h.idleTimer = nil
	}
	if h.stop == nil && !h.closed {
		ctx, stop := context.WithCancel(context.Background())
		h.stop = stop
		h.wg.Add(1)
		go h.loop(ctx)
	}
	h.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if m := h.waiters[tag]; m != nil {
				delete(m, ch)
				if len(m) == 0 {
					delete(h.waiters, tag)
				}
			}
			h.n--
			if h.n == 0 && h.stop != nil {
				gen := h.idleGen
				h.idleTimer = time.AfterFunc(h.idle, func() { h.stopIdle(gen) })
			}
		})
	}
}

// stopIdle stops the listener if no waiter came since the idle timer of
// generation gen started.
func (h *Hub) stopIdle(gen uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.idleGen != gen || h.n != 0 || h.stop == nil {
		return
	}
	h.stop()
	h.stop, h.listening, h.idleTimer = nil, false, nil
}

// Listening reports whether the listener is connected and LISTENing, so
// that notifications reach the waiters.
func (h *Hub) Listening() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.listening
}

// Wake wakes the waiters of tag in this process (a change made here
// needs no round trip through the server).
func (h *Hub) Wake(tag string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.waiters[tag] {
		notify(ch)
	}
}

// WakeAll wakes every waiter.
func (h *Hub) WakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.waiters {
		for ch := range m {
			notify(ch)
		}
	}
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// loop LISTENs until ctx ends, reconnecting a second after a failure.
func (h *Hub) loop(ctx context.Context) {
	defer h.wg.Done()
	for {
		err := h.listen(ctx)
		h.mu.Lock()
		if ctx.Err() == nil {
			h.listening = false
		}
		h.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		h.log.Warn("pgnotify: listening failed; waiters poll until it is back", zap.String("channel", h.channel), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (h *Hub) listen(ctx context.Context) error {
	// A connection of the pool, hijacked: made with the pool's hooks
	// (BeforeConnect, AfterConnect), owned by the listener from now on.
	pc, err := h.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := pc.Hijack()
	h.mu.Lock()
	h.connects++
	h.mu.Unlock()
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{h.channel}.Sanitize()); err != nil {
		return err
	}
	h.mu.Lock()
	if ctx.Err() == nil {
		h.listening = true
	}
	h.mu.Unlock()
	h.WakeAll() // a notification may have come before LISTEN
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		h.Wake(n.Payload)
	}
}

// Close stops the listener and wakes every waiter; later subscribers
// are woken only by Wake.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	if h.idleTimer != nil {
		h.idleTimer.Stop()
		h.idleTimer = nil
	}
	if h.stop != nil {
		h.stop()
		h.stop, h.listening = nil, false
	}
	h.mu.Unlock()
	h.WakeAll()
	h.wg.Wait()
}
