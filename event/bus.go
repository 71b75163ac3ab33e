package event

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event/internal/ratelog"
)

// Handler receives the events of one subscription, one at a time, in the
// order they were published. ctx ends when the bus is closed and its Close
// deadline has passed.
type Handler func(ctx context.Context, ev Event)

// Bus is publish/subscribe for events across requests: observers (audit
// logs, metrics, dashboards, other instances of a service) subscribe to the
// types they care about. [MemoryBus] serves one process; the natsbus
// subpackage serves several.
//
// A pattern is a glob over the event type: "*" matches any run of
// characters, dots included, so "*" matches every event, "order.*" every
// order event, "order.*" also "order.item.added", "*.error" both
// "order.error" and "payment.error". "?" and "[...]" work as in [path.Match].
type Bus interface {
	// Publish delivers ev to every subscription whose pattern matches its
	// type. It does not wait for handlers to run.
	Publish(ctx context.Context, ev Event) error
	// Subscribe registers h for the events matching pattern and returns the
	// subscription's id. It fails with ErrBadPattern for a malformed pattern.
	// ctx bounds any work with a broker.
	Subscribe(ctx context.Context, pattern string, h Handler) (string, error)
	// Unsubscribe removes a subscription; it reports whether id was one.
	// Events queued for it and not yet handled are discarded.
	Unsubscribe(id string) bool
	// Close stops the bus: Publish fails with ErrClosed, queued events are
	// handled, and Close waits for the handlers until ctx ends.
	Close(ctx context.Context) error
}

// BusConfig configures a [MemoryBus]. The zero value is usable.
type BusConfig struct {
	// QueueSize is how many events may wait for each subscription's handler.
	// Zero means 1024.
	QueueSize int
	// PublishWait bounds how long Publish waits for room in the queue of a
	// subscription whose handler is behind; the wait is shared by all full
	// subscriptions of one Publish, so Publish returns within about
	// PublishWait. A subscription still full after it misses the event, which
	// is counted, logged and reported as an error wrapping ErrDropped.
	// Zero means 50ms; negative means do not wait.
	PublishWait time.Duration
	// Logger receives handler panics and dropped events: drops at most one
	// line a second, with the number not logged since the last one
	// (BusStats counts them all). Nil means no logging.
	Logger *zap.Logger
}

// BusStats counts what a [MemoryBus] did.
type BusStats struct {
	// Published is the number of Publish calls that were accepted.
	Published uint64
	// Delivered is the number of handler calls that returned or panicked.
	Delivered uint64
	// Dropped is the number of (event, subscription) pairs lost to a full
	// queue.
	Dropped uint64
	// Panics is the number of handler calls that panicked (and were
	// recovered).
	Panics uint64
	// Subscriptions is the number of live subscriptions.
	Subscriptions int
}

// MemoryBus is the in-process [Bus]. Each subscription has its own queue
// and goroutine, so a slow handler delays only its own events and a
// panicking handler is recovered and logged while the others go on.
type MemoryBus struct {
	cfg    BusConfig
	log    *zap.Logger
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	subs   atomic.Pointer[[]*subscription]
	closed atomic.Bool
	nextID uint64
	wg     sync.WaitGroup

	published, delivered, dropped, panics atomic.Uint64
	dropLog                               ratelog.Limiter
}

var _ Bus = (*MemoryBus)(nil)

type subscription struct {
	id      string
	pattern matcher
	h       Handler
	queue   chan Event
	stop    chan struct{} // closed by Unsubscribe: exit now
	drain   chan struct{} // closed by Close: handle what is queued, then exit
}

// NewMemoryBus returns an in-process bus. Close it to stop its goroutines.
func NewMemoryBus(cfg BusConfig) *MemoryBus {
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 1024
	}
	if cfg.PublishWait == 0 {
		cfg.PublishWait = 50 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	b := &MemoryBus{cfg: cfg, log: cfg.Logger}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.subs.Store(new([]*subscription))
	return b
}

// Subscribe implements [Bus].
func (b *MemoryBus) Subscribe(_ context.Context, pattern string, h Handler) (string, error) {
	m, err := compilePattern(pattern)
	if err != nil {
		return "", err
	}
	if h == nil {
		return "", fmt.Errorf("event: Subscribe(%q) with a nil handler", pattern)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return "", ErrClosed
	}
	b.nextID++
	s := &subscription{id: "sub-" + strconv.FormatUint(b.nextID, 10), pattern: m, h: h,
		queue: make(chan Event, b.cfg.QueueSize), stop: make(chan struct{}), drain: make(chan struct{})}
	old := *b.subs.Load()
	next := append(old[:len(old):len(old)], s)
	b.subs.Store(&next)
	b.wg.Add(1)
	go b.run(s)
	return s.id, nil
}

// Unsubscribe implements [Bus].
func (b *MemoryBus) Unsubscribe(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := *b.subs.Load()
	for i, s := range old {
		if s.id == id {
			next := make([]*subscription, 0, len(old)-1)
			next = append(append(next, old[:i]...), old[i+1:]...)
			b.subs.Store(&next)
			close(s.stop)
			return true
		}
	}
	return false
}

// Publish implements [Bus]. It enqueues ev for every matching subscription;
// see BusConfig.PublishWait for what happens when a queue is full.
func (b *MemoryBus) Publish(ctx context.Context, ev Event) error {
	if b.closed.Load() {
		return ErrClosed
	}
	if ev.Type == "" && ev.Payload != nil {
		ev.Type = ev.Payload.EventType()
	}
	b.published.Add(1)
	var full []*subscription
	for _, s := range *b.subs.Load() {
		if !s.pattern.match(string(ev.Type)) {
			continue
		}
		select {
		case s.queue <- ev:
		case <-s.stop:
		default:
			full = append(full, s)
		}
	}
	if len(full) == 0 {
		return nil
	}
	var lost []string
	var timeout <-chan time.Time
	if b.cfg.PublishWait > 0 {
		t := time.NewTimer(b.cfg.PublishWait)
		defer t.Stop()
		timeout = t.C
	} else {
		c := make(chan time.Time)
		close(c)
		timeout = c
	}
	expired := false
	for _, s := range full {
		if expired {
			select {
			case s.queue <- ev:
			case <-s.stop:
			default:
				lost = append(lost, s.id)
			}
			continue
		}
		select {
		case s.queue <- ev:
		case <-s.stop:
		case <-timeout:
			expired = true
			lost = append(lost, s.id)
		case <-ctx.Done():
			expired = true
			lost = append(lost, s.id)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	b.dropped.Add(uint64(len(lost)))
	if ok, skipped := b.dropLog.Allow(); ok {
		b.log.Warn("event: subscriber queue full, event dropped", zap.String("type", string(ev.Type)),
			zap.String("request_id", ev.RequestID), zap.Uint64("seq", ev.Seq), zap.Strings("subscriptions", lost),
			zap.Uint64("unlogged_since_last", skipped))
	}
	return fmt.Errorf("%w: %s #%d not delivered to %s (queue of %d full); make the handler faster or raise BusConfig.QueueSize",
		ErrDropped, ev.Type, ev.Seq, strings.Join(lost, ", "), b.cfg.QueueSize)
}

func (b *MemoryBus) run(s *subscription) {
	defer b.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case ev := <-s.queue:
			b.call(s, ev)
		case <-s.drain:
			for {
				select {
				case <-s.stop:
					return
				case ev := <-s.queue:
					b.call(s, ev)
				default:
					return
				}
			}
		}
	}
}

func (b *MemoryBus) call(s *subscription, ev Event) {
	defer func() {
		b.delivered.Add(1)
		if r := recover(); r != nil {
			b.panics.Add(1)
			b.log.Error("event: handler panicked; it keeps its subscription", zap.String("subscription", s.id),
				zap.String("type", string(ev.Type)), zap.String("request_id", ev.RequestID), zap.Any("panic", r), zap.StackSkip("stack", 1))
		}
	}()
	s.h(b.ctx, ev)
}

// Close implements [Bus]. Handlers finish the events already queued; if ctx
// ends first, the handlers' context is cancelled and Close returns ctx's
// error without waiting further.
func (b *MemoryBus) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed.Swap(true) {
		b.mu.Unlock()
		return nil
	}
	for _, s := range *b.subs.Load() {
		close(s.drain)
	}
	b.mu.Unlock()
	done := make(chan struct{})
	go func() {
		b.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		b.cancel()
		return nil
	case <-ctx.Done():
		b.cancel()
		return fmt.Errorf("event: closing bus: handlers still running: %w", ctx.Err())
	}
}

// Stats returns the bus's counters.
func (b *MemoryBus) Stats() BusStats {
	return BusStats{Published: b.published.Load(), Delivered: b.delivered.Load(), Dropped: b.dropped.Load(),
		Panics: b.panics.Load(), Subscriptions: len(*b.subs.Load())}
}

// Match reports whether an event type matches a subscription pattern, as
// [Bus] implementations match them. It fails with ErrBadPattern for a
// malformed pattern.
func Match(pattern string, t Type) (bool, error) {
	m, err := compilePattern(pattern)
	if err != nil {
		return false, err
	}
	return m.match(string(t)), nil
}

// matcher is a compiled pattern; the common shapes avoid path.Match.
type matcher struct {
	kind    byte // 'a' all, 'e' exact, 'p' prefix, 'g' glob
	pattern string
}

func compilePattern(p string) (matcher, error) {
	if p == "" {
		return matcher{}, fmt.Errorf(`%w: empty; use "*" for every event`, ErrBadPattern)
	}
	if _, err := path.Match(p, ""); err != nil {
		return matcher{}, fmt.Errorf("%w: %q: %v", ErrBadPattern, p, err)
	}
	if strings.Contains(p, "/") {
		return matcher{}, fmt.Errorf("%w: %q: event types have no '/'", ErrBadPattern, p)
	}
	switch {
	case p == "*":
		return matcher{kind: 'a'}, nil
	case !strings.ContainsAny(p, `*?[\`):
		return matcher{kind: 'e', pattern: p}, nil
	case strings.HasSuffix(p, "*") && !strings.ContainsAny(p[:len(p)-1], `*?[\`):
		return matcher{kind: 'p', pattern: p[:len(p)-1]}, nil
	}
	return matcher{kind: 'g', pattern: p}, nil
}

func (m matcher) match(t string) bool {
	switch m.kind {
	case 'a':
		return true
	case 'e':
		return t == m.pattern
	case 'p':
		return strings.HasPrefix(t, m.pattern)
	}
	ok, _ := path.Match(m.pattern, t)
	return ok
}
