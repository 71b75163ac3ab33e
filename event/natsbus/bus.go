package natsbus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/internal/ratelog"
)

// Config configures a [Bus].
type Config struct {
	// URL is the NATS server to dial when Conn is nil, for example
	// "nats://127.0.0.1:4222". Empty means nats.DefaultURL.
	URL string
	// Conn, if set, is used instead of dialing. The bus does not close it.
	Conn *nats.Conn
	// Subject is the prefix of the subjects events are published on; the
	// event type follows it after a dot. Empty means "agentgraph.events".
	// Instances that should see each other's events use the same prefix.
	Subject string
	// Name is the connection name shown by the NATS server's monitoring,
	// when the bus dials. Empty means "agentgraph".
	Name string
	// Local configures the in-process delivery to each subscription's handler
	// (queue size, publish wait, logger); see event.BusConfig. A zero
	// PublishWait means event.BusConfig's default: an event for a handler
	// whose queue is full waits up to 50ms for room, so a burst larger than
	// QueueSize to a handler that keeps up is held in NATS's pending buffer
	// rather than lost. A negative PublishWait drops such an event at once:
	// set it when a handler may block for long, since every wait holds up
	// the subscription's later messages (NATS hands them over one at a
	// time) and, past NATS's pending limits, NATS drops them instead. Drops
	// and messages that are not events are counted in Stats and logged at
	// most once a second each.
	Local event.BusConfig
	// Decoder decodes the events received from NATS into the application's
	// payload structs. Nil means payloads arrive as event.Raw (and
	// event.Error).
	Decoder *event.Decoder
}

// Stats counts what a [Bus] did.
type Stats struct {
	// Published is the number of events published to NATS.
	Published uint64
	// Received is the number of messages received from NATS, summed over
	// subscriptions.
	Received uint64
	// Undecodable is the number of received messages that were not events.
	Undecodable uint64
	// Dropped is the number of events lost to a full handler queue, plus
	// the messages NATS dropped because a subscription fell behind.
	Dropped uint64
	// Subscriptions is the number of live subscriptions.
	Subscriptions int
}

// Bus is an event.Bus over NATS. It is safe for concurrent use.
type Bus struct {
	cfg    Config
	log    *zap.Logger
	nc     *nats.Conn
	ownsNC bool
	prefix string

	mu     sync.Mutex
	subs   map[string]*subscription
	nextID uint64
	closed bool
	// closing mirrors closed for the lock-free Publish.
	closing atomic.Bool
	bg      sync.WaitGroup // local buses being closed after Unsubscribe

	published, received, undecodable, localDropped atomic.Uint64
	natsDropped                                    atomic.Uint64 // from subscriptions already gone
	undecodableLog                                 ratelog.Limiter
}

var _ event.Bus = (*Bus)(nil)

type subscription struct {
	nsub    *nats.Subscription
	local   *event.MemoryBus
	localID string
}

// New connects to NATS (unless cfg.Conn is set) and returns a bus. ctx bounds
// the dial.
func New(ctx context.Context, cfg Config) (*Bus, error) {
	if cfg.Local.Logger == nil {
		cfg.Local.Logger = zap.NewNop()
	}
	prefix := cfg.Subject
	if prefix == "" {
		prefix = "agentgraph.events"
	}
	if err := checkSubject(prefix); err != nil {
		return nil, fmt.Errorf("natsbus: Config.Subject: %w", err)
	}
	b := &Bus{cfg: cfg, log: cfg.Local.Logger, nc: cfg.Conn, prefix: prefix, subs: map[string]*subscription{}}
	if b.nc == nil {
		url := cfg.URL
		if url == "" {
			url = nats.DefaultURL
		}
		name := cfg.Name
		if name == "" {
			name = "agentgraph"
		}
		timeout := 5 * time.Second
		if d, ok := ctx.Deadline(); ok {
			timeout = time.Until(d)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("natsbus: connecting to %s: %w", url, err)
		}
		nc, err := nats.Connect(url, nats.Name(name), nats.Timeout(timeout), nats.ErrorHandler(b.natsError))
		if err != nil {
			return nil, fmt.Errorf("natsbus: connecting to %s: %w (is nats-server running? set Config.URL)", url, err)
		}
		b.nc, b.ownsNC = nc, true
	}
	return b, nil
}

func (b *Bus) natsError(_ *nats.Conn, sub *nats.Subscription, err error) {
	subject := ""
	if sub != nil {
		subject = sub.Subject
	}
	b.log.Warn("natsbus: asynchronous NATS error", zap.String("subject", subject), zap.Error(err))
}

// Publish sends ev to every instance's matching subscribers, this one's
// included. It returns once the message is in the connection's outgoing
// buffer; it does not wait for handlers.
func (b *Bus) Publish(ctx context.Context, ev event.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.closing.Load() {
		return fmt.Errorf("natsbus: publish: %w", event.ErrClosed)
	}
	if ev.Type == "" && ev.Payload != nil {
		ev.Type = ev.Payload.EventType()
	}
	if err := checkSubject(string(ev.Type)); err != nil {
		return fmt.Errorf("natsbus: event type %q cannot be a NATS subject: %w", ev.Type, err)
	}
	buf := bufPool.Get().(*[]byte)
	defer bufPool.Put(buf)
	data, err := ev.AppendJSON((*buf)[:0])
	if err != nil {
		return fmt.Errorf("natsbus: %w", err)
	}
	*buf = data
	subject := b.prefix + "." + string(ev.Type)
	if trace.SpanContextFromContext(ctx).IsValid() {
		// The publisher's trace context travels in the message's headers,
		// so the subscribers' handlers continue its trace.
		m := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(m.Header))
		err = b.nc.PublishMsg(m)
	} else {
		err = b.nc.Publish(subject, data)
	}
	if err != nil {
		if errors.Is(err, nats.ErrConnectionClosed) {
			return fmt.Errorf("natsbus: publishing %s: %w: %w", ev.Type, event.ErrClosed, err)
		}
		return fmt.Errorf("natsbus: publishing %s: %w", ev.Type, err)
	}
	b.published.Add(1)
	return nil
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// Subscribe registers h for the events matching pattern published by any
// instance. It returns once the NATS server has registered the
// subscription, so an event published anywhere after it returns is
// delivered; ctx bounds that wait (10s when ctx has no deadline).
func (b *Bus) Subscribe(ctx context.Context, pattern string, h event.Handler) (string, error) {
	if _, err := event.Match(pattern, ""); err != nil {
		return "", err
	}
	local := event.NewMemoryBus(b.cfg.Local)
	localID, err := local.Subscribe(ctx, pattern, traced(h))
	if err != nil {
		_ = local.Close(context.Background())
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		_ = local.Close(context.Background())
		return "", event.ErrClosed
	}
	subject := b.subject(pattern)
	nsub, err := b.nc.Subscribe(subject, func(m *nats.Msg) { b.deliver(local, m) })
	if err != nil {
		_ = local.Close(context.Background())
		return "", fmt.Errorf("natsbus: subscribing to %s: %w", subject, err)
	}
	if err := flush(ctx, b.nc); err != nil {
		_ = nsub.Unsubscribe()
		_ = local.Close(context.Background())
		return "", fmt.Errorf("natsbus: registering the subscription to %s with the server: %w", subject, err)
	}
	b.nextID++
	id := fmt.Sprintf("nats-%d", b.nextID)
	b.subs[id] = &subscription{nsub: nsub, local: local, localID: localID}
	return id, nil
}

func (b *Bus) deliver(local *event.MemoryBus, m *nats.Msg) {
	b.received.Add(1)
	ev, err := b.cfg.Decoder.Decode(m.Data)
	if err != nil {
		b.undecodable.Add(1)
		if ok, skipped := b.undecodableLog.Allow(); ok {
			b.log.Warn("natsbus: message is not an event", zap.String("subject", m.Subject), zap.Error(err),
				zap.Uint64("unlogged_since_last", skipped))
		}
		return
	}
	if len(m.Header) > 0 {
		ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(m.Header))
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && ev.Payload != nil {
			ev.Payload = tracedPayload{Payload: ev.Payload, sc: sc}
		}
	}
	if err := local.Publish(context.Background(), ev); err != nil {
		if errors.Is(err, event.ErrDropped) {
			b.localDropped.Add(1) // the local bus has logged it
		}
	}
}

// tracedPayload carries the publisher's span context from a message's
// headers through the local bus to the handler, which traced unwraps.
type tracedPayload struct {
	event.Payload
	sc trace.SpanContext
}

// traced returns h receiving, for an event published under a span, a
// context holding that span's context as its remote parent.
func traced(h event.Handler) event.Handler {
	return func(ctx context.Context, ev event.Event) {
		if tp, ok := ev.Payload.(tracedPayload); ok {
			ev.Payload = tp.Payload
			ctx = trace.ContextWithRemoteSpanContext(ctx, tp.sc)
		}
		h(ctx, ev)
	}
}

// subject translates a glob to the narrowest NATS subject that receives
// every event it matches.
func (b *Bus) subject(pattern string) string {
	const meta = `*?[\`
	switch {
	case pattern == "*":
	case !strings.ContainsAny(pattern, meta) && checkSubject(pattern) == nil:
		return b.prefix + "." + pattern
	case strings.HasSuffix(pattern, ".*"):
		if p := pattern[:len(pattern)-2]; !strings.ContainsAny(p, meta) && checkSubject(p) == nil {
			return b.prefix + "." + p + ".>"
		}
	}
	return b.prefix + ".>"
}

// Unsubscribe implements event.Bus. It does not wait for a running handler.
func (b *Bus) Unsubscribe(id string) bool {
	b.mu.Lock()
	s, ok := b.subs[id]
	delete(b.subs, id)
	b.mu.Unlock()
	if !ok {
		return false
	}
	b.retire(s)
	_ = s.nsub.Unsubscribe()
	s.local.Unsubscribe(s.localID) // discards what is queued
	// Close waits for a handler still running; do not make the caller wait
	// (it may be that handler).
	b.bg.Go(func() { _ = s.local.Close(context.Background()) })
	return true
}

// retire keeps the NATS drop count of a subscription that is going away.
func (b *Bus) retire(s *subscription) {
	if n, err := s.nsub.Dropped(); err == nil && n > 0 {
		b.natsDropped.Add(uint64(n))
	}
}

// Close unsubscribes everything, lets handlers finish the events already
// received until ctx ends, and closes the connection if the bus dialed it.
func (b *Bus) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.closing.Store(true)
	subs := b.subs
	b.subs = map[string]*subscription{}
	b.mu.Unlock()

	var errs []error
	if !b.nc.IsClosed() {
		if err := flush(ctx, b.nc); err != nil {
			errs = append(errs, fmt.Errorf("natsbus: flushing publishes: %w", err))
		}
	}
	for _, s := range subs {
		b.retire(s)
		_ = s.nsub.Unsubscribe()
	}
	for _, s := range subs {
		if err := s.local.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	b.bg.Wait()
	if b.ownsNC {
		b.nc.Close()
	}
	return errors.Join(errs...)
}

// Stats returns the bus's counters.
func (b *Bus) Stats() Stats {
	b.mu.Lock()
	n := len(b.subs)
	dropped := b.localDropped.Load() + b.natsDropped.Load()
	for _, s := range b.subs {
		if d, err := s.nsub.Dropped(); err == nil {
			dropped += uint64(d)
		}
	}
	b.mu.Unlock()
	return Stats{Published: b.published.Load(), Received: b.received.Load(), Undecodable: b.undecodable.Load(),
		Dropped: dropped, Subscriptions: n}
}

// checkSubject reports whether s is usable as (part of) a NATS subject:
// non-empty dot-separated tokens without spaces or wildcards.
func checkSubject(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	for tok := range strings.SplitSeq(s, ".") {
		if tok == "" {
			return errors.New("has an empty token (two dots, or a dot at an end)")
		}
		if strings.ContainsAny(tok, " \t\r\n*>") {
			return fmt.Errorf("token %q holds whitespace or a wildcard", tok)
		}
	}
	return nil
}

// flush waits until the server has processed everything sent so far, within
// ctx or, when ctx has no deadline, 10 seconds.
func flush(ctx context.Context, nc *nats.Conn) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	return nc.FlushWithContext(ctx)
}
