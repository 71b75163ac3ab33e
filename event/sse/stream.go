package sse

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/internal/resume"
)

// Config configures a [Stream] (and, for Unnamed and Retry, a [Writer]).
// The zero value is usable.
type Config struct {
	// Replay is how many of the latest events the stream keeps so that a
	// client reconnecting with Last-Event-ID gets what it missed. Zero means
	// 1024. While the oldest kept event has not been written to any client,
	// the stream does not drop it: Run waits instead, which holds back the
	// emitter and so the run (for at most ReaderWait), unless
	// [Stream.MarkSent] counted it as delivered another way.
	Replay int
	// ReaderWait bounds how long Run waits for a client while Replay events
	// wait unread (none is connected, or none reads): past it, Run stops
	// with an error matching [ErrNoReader], and a client that connects
	// later gets the kept events, then an error event with code
	// "no_reader". Zero means no bound but Run's context.
	ReaderWait time.Duration
	// Heartbeat is the interval of comment lines sent while no event is
	// due, so proxies keep the connection and a vanished client is noticed.
	// Zero means [DefaultHeartbeat]; negative disables heartbeats. It must
	// stay well below the idle timeout of the clients ([FollowConfig]'s
	// IdleTimeout is 1 minute by default), or they drop every quiet stream
	// as dead.
	Heartbeat time.Duration
	// Retry, if positive, is sent as the retry: field when a client connects,
	// telling browsers how long to wait before reconnecting.
	Retry time.Duration
	// Unnamed leaves out the event: line, so browsers deliver every event to
	// EventSource.onmessage (the type is still in the JSON). By default
	// events are named by their type.
	Unnamed bool
	// Logger receives connection-level warnings. Nil means no logging.
	Logger *zap.Logger
}

// ErrNoReader is matched by the error of a [Stream.Run] that stopped
// because its events waited for a client longer than Config.ReaderWait.
var ErrNoReader = errors.New("sse: no client read the stream's events")

// Stream serves the events of one request to HTTP clients as Server-Sent
// Events, and lets a client that lost its connection resume where it left
// off.
//
// [Stream.Run] reads the events (usually from an event.Emitter), encodes each
// once and keeps the latest Config.Replay of them. [Stream.ServeHTTP] writes
// them to a client, flushing per event, from the start or, when the request
// carries a Last-Event-ID header, from the event after that id; then it
// follows new events, sends heartbeats while idle, and returns when the
// stream has ended and the client has everything, or when the client goes
// away. Several clients may be served at once; they share the replay window,
// which moves on as soon as any of them has been sent an event, so a client
// that falls more than Replay events behind the fastest one (or joins late)
// starts with an events_lost notice. A client resuming a stream
// that has ended and that it has read in full gets 204 No Content, which
// tells browsers to stop reconnecting. If Run ended with an error, clients
// get an error event with code "stream_failed" (or "no_reader" for
// [ErrNoReader], saying why) after the last event, with the id after the
// last event's.
//
// For resumption to work across a dropped connection, the run must outlive
// the first request: give it a context that is not the request's (for
// example context.WithoutCancel plus a deadline).
//
// What a resuming client gets: events produced while no client was
// connected are never dropped (Run waits for a client once Replay of them
// are pending, for at most Config.ReaderWait), and events written to a
// connection that broke are sent again as long as fewer than Replay events
// were written after them. SSE has no
// acknowledgements, so events in flight in the network when a connection
// breaks count as written; size Replay for the events a client can fall
// behind by. A client that fell further behind receives an error event with
// code "events_lost", whose id is the last lost event's, before the events
// that are left.
type Stream struct {
	cfg Config
	log *zap.Logger

	mu        sync.Mutex
	frames    []frame // ring of encoded events
	head, n   int
	first     uint64 // absolute index of frames[head]
	sent      uint64 // absolute index below which every frame was written to some client
	evicted   uint64 // seq of the latest evicted frame
	requestID string
	done      bool
	err       error
	changed   chan struct{} // closed and replaced when frames are added or the stream ends
	space     chan struct{} // closed and replaced when sent advances
	finished  chan struct{}
	scratch   []byte // encoding buffer of Run
}

type frame struct {
	seq  uint64
	data []byte
}

// DefaultHeartbeat is the interval of a [Stream]'s heartbeat comments when
// Config.Heartbeat is zero. A server that writes events with a [Writer]
// sends [Writer.Heartbeat] at about this interval while it waits, so
// that a [Follow] client (or a proxy) does not take the quiet connection
// for a dead one.
const DefaultHeartbeat = 15 * time.Second

// NewStream returns a stream; start [Stream.Run] to feed it.
func NewStream(cfg Config) *Stream {
	if cfg.Replay <= 0 {
		cfg.Replay = 1024
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return &Stream{cfg: cfg, log: cfg.Logger, frames: make([]frame, cfg.Replay),
		changed: make(chan struct{}), space: make(chan struct{}), finished: make(chan struct{})}
}

// Run feeds the stream from events until they end, an error arrives, or ctx
// ends, and returns that error (nil when the events simply ended). Clients
// then receive what is left and their responses end. Call Run once.
func (s *Stream) Run(ctx context.Context, events iter.Seq2[event.Event, error]) (err error) {
	defer func() { s.finish(err) }()
	for ev, err := range events {
		if err != nil {
			return err
		}
		if err := s.add(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// Done is closed when Run has returned.
func (s *Stream) Done() <-chan struct{} { return s.finished }

// Err returns the error Run returned, once Done is closed.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Stream) add(ctx context.Context, ev event.Event) error {
	data, err := AppendEvent(s.scratch[:0], ev, !s.cfg.Unnamed)
	if err != nil {
		// Tell the client in place of the event rather than end the stream.
		s.log.Error("sse: event cannot be encoded; sending an error event in its place", zap.String("request_id", ev.RequestID), zap.Uint64("seq", ev.Seq), zap.Error(err))
		data, _ = AppendEvent(s.scratch[:0], event.Event{RequestID: ev.RequestID, Seq: ev.Seq, Time: ev.Time, Payload: event.Error{
			Code: "unencodable_event", Message: "an event of type " + string(ev.Type) + " could not be encoded",
		}}, !s.cfg.Unnamed)
	}
	s.scratch = data
	s.mu.Lock()
	var wait *time.Timer
	for s.n == len(s.frames) && s.sent <= s.first {
		// Full, and the oldest frame has reached no client: wait for one.
		space := s.space
		s.mu.Unlock()
		var timeout <-chan time.Time
		if s.cfg.ReaderWait > 0 {
			if wait == nil {
				wait = time.NewTimer(s.cfg.ReaderWait)
				defer wait.Stop()
			}
			timeout = wait.C
		}
		select {
		case <-space:
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout:
			return fmt.Errorf("%w: the %d events it keeps for one waited unread for %s, so the run was stopped; start it again", ErrNoReader, len(s.frames), s.cfg.ReaderWait)
		}
		s.mu.Lock()
	}
	if s.requestID == "" {
		s.requestID = ev.RequestID
	}
	var f *frame
	if s.n == len(s.frames) {
		f = &s.frames[s.head] // evict the oldest, reusing its buffer
		s.evicted = f.seq
		s.head = (s.head + 1) % len(s.frames)
		s.first++
		s.n--
	} else {
		f = &s.frames[(s.head+s.n)%len(s.frames)]
	}
	f.seq, f.data = ev.Seq, append(f.data[:0], data...)
	s.n++
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	return nil
}

func (s *Stream) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.done, s.err = true, err
	close(s.changed)
	s.changed = make(chan struct{})
	close(s.finished)
}

// ServeHTTP writes the stream to one client; see [Stream].
func (s *Stream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	after, resume, err := lastEventID(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	caughtUp := resume && s.done && after >= s.finalID()
	s.mu.Unlock()
	if caughtUp {
		// 204 tells EventSource to stop reconnecting: there is nothing more.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	// The headers go out with the first frames when some are ready, in
	// one write, or alone before the stream waits for its first frame.
	ww := NewWriter(w, s.cfg)
	var heartbeat <-chan time.Time
	if s.cfg.Heartbeat > 0 {
		t := time.NewTicker(s.cfg.Heartbeat)
		defer t.Stop()
		heartbeat = t.C
	}
	pos, started, failureSent := uint64(0), false, false
	var buf []byte
	for {
		s.mu.Lock()
		if !started {
			started = true
			if resume {
				pos = s.positionAfter(after)
			}
		}
		buf = buf[:0]
		if pos < s.first {
			// Frames this client needs were dropped.
			buf = s.appendLost(buf)
			pos = s.first
		}
		end := s.first + uint64(s.n)
		for i := pos; i < end; i++ {
			buf = append(buf, s.frames[(s.head+int(i-s.first))%len(s.frames)].data...)
		}
		done, changed := s.done, s.changed
		if done && s.err != nil && pos == end && len(buf) == 0 && !failureSent && (!resume || after < s.finalID()) {
			failureSent = true
			buf = s.appendFailure(buf)
		}
		s.mu.Unlock()

		if len(buf) > 0 {
			if err := ww.write(buf); err != nil {
				return // the client went away
			}
			if failureSent {
				return
			}
			s.markSent(end)
			pos = end
			continue
		}
		if !ww.started {
			if err := ww.Start(); err != nil {
				s.log.Warn("sse: cannot start the stream", zap.Error(err))
				return
			}
		}
		if done {
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		case <-heartbeat:
			if err := ww.Heartbeat(); err != nil {
				return
			}
		}
	}
}

// positionAfter returns the absolute index of the first frame with a
// sequence number above seq, or an index below s.first when some of those
// frames were evicted. s.mu is held.
func (s *Stream) positionAfter(seq uint64) uint64 {
	if s.first > 0 && s.evicted > seq {
		return s.first - 1
	}
	for i := 0; i < s.n; i++ {
		if s.frames[(s.head+i)%len(s.frames)].seq > seq {
			return s.first + uint64(i)
		}
	}
	return s.first + uint64(s.n)
}

// appendLost appends an error event telling the client that events were
// dropped before it could read them. s.mu is held.
func (s *Stream) appendLost(b []byte) []byte {
	b, _ = AppendEvent(b, resume.Lost(s.requestID, s.evicted), !s.cfg.Unnamed)
	return b
}

// lastSeq returns the sequence number of the newest event, or 0. s.mu is
// held.
func (s *Stream) lastSeq() uint64 {
	if s.n == 0 {
		return 0
	}
	return s.frames[(s.head+s.n-1)%len(s.frames)].seq
}

// finalID returns the id of the last message of an ended stream: the newest
// event's, or one more for the stream_failed event of a failed run. s.mu is
// held.
func (s *Stream) finalID() uint64 {
	if s.err != nil {
		return s.lastSeq() + 1
	}
	return s.lastSeq()
}

// appendFailure appends the error event that tells clients the run ended
// with an error. Its id follows the newest event's, so a client that has
// seen it is caught up, and one that has not gets it on resuming. s.mu is
// held.
func (s *Stream) appendFailure(b []byte) []byte {
	failure := event.Error{Code: "stream_failed", Message: "the run stopped before it finished"}
	if errors.Is(s.err, ErrNoReader) {
		failure = event.Error{Code: "no_reader", Message: s.err.Error()}
	}
	ev := event.Event{RequestID: s.requestID, Seq: s.lastSeq() + 1, Time: time.Now(), Payload: failure}
	b, _ = AppendEvent(b, ev, !s.cfg.Unnamed)
	s.log.Warn("sse: stream ended with an error", zap.String("request_id", s.requestID), zap.Error(s.err))
	return b
}

// MarkSent counts every event the stream holds as written to a client,
// as if one had read them: Run does not wait for a client on their account
// (nor stop with [ErrNoReader]). It is for events delivered another way
// too, such as a journal that clients on other instances read: call it
// once such a delivery of the newest event succeeded. A client that
// connects later still gets the events kept; those dropped to make room
// meanwhile are announced to it by an events_lost error event.
func (s *Stream) MarkSent() {
	s.mu.Lock()
	end := s.first + uint64(s.n)
	s.mu.Unlock()
	s.markSent(end)
}

func (s *Stream) markSent(end uint64) {
	s.mu.Lock()
	if end > s.sent {
		s.sent = end
		close(s.space)
		s.space = make(chan struct{})
	}
	s.mu.Unlock()
}

// lastEventID reads the Last-Event-ID header (or, for clients that cannot
// set headers, the lastEventId query parameter).
func lastEventID(r *http.Request) (uint64, bool, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("lastEventId")
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("sse: Last-Event-ID %q is not an event id of this stream (ids are sequence numbers)", v)
	}
	return n, true, nil
}
