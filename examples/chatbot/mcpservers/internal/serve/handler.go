package serve

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/agent/server/guard"
)

// Defaults of [Limits].
const (
	// DefaultMaxSessions bounds the live sessions.
	DefaultMaxSessions = 64
	// DefaultSessionIdleTTL ends a session nothing has used for this long.
	DefaultSessionIdleTTL = 10 * time.Minute
	// DefaultMaxInFlight bounds the requests served at once.
	DefaultMaxInFlight = 256
	// DefaultMaxBodyBytes bounds a request body.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultBodyTimeout bounds how long a request body may take to arrive.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultWriteStall bounds how long one write of a response may block.
	DefaultWriteStall = 30 * time.Second
	// DefaultMaxSessionEvents bounds the events kept for replay per session.
	DefaultMaxSessionEvents = 1024
	// DefaultMaxSessionEventBytes bounds the bytes of the events kept for
	// replay per session.
	DefaultMaxSessionEventBytes = 1 << 20
	// DefaultMaxSessionRequests bounds the requests one session serves.
	DefaultMaxSessionRequests = 1000
)

// Limits bound what clients can make an HTTP server hold. A zero field
// takes its default.
type Limits struct {
	// MaxSessions bounds the live sessions; an initialize request beyond
	// it is refused with 503 Service Unavailable. Zero means
	// DefaultMaxSessions.
	MaxSessions int
	// SessionIdleTTL ends a session after it has gone this long with no
	// request in flight: a session is kept while any of its requests is
	// being served, a call's response stream or a listening stream (which
	// is sent a ping every quarter of SessionIdleTTL, so that a client
	// gone away is noticed), and for SessionIdleTTL after the last one
	// ended. Zero means DefaultSessionIdleTTL.
	SessionIdleTTL time.Duration
	// MaxInFlight bounds the requests served at once, open streams
	// included; a request beyond it is refused with 503. Zero means
	// DefaultMaxInFlight.
	MaxInFlight int
	// MaxBodyBytes bounds a request body; a larger one is refused with 413
	// Request Entity Too Large. Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyTimeout bounds how long a request body may take to arrive. Zero
	// means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// WriteStall bounds how long one write of a response may block on a
	// client that does not read; the connection is closed after it. Zero
	// means DefaultWriteStall.
	WriteStall time.Duration
	// MaxSessionEvents and MaxSessionEventBytes bound the messages a
	// session keeps for a client to resume a broken stream from
	// (Last-Event-ID): the oldest are dropped beyond them, and a message
	// larger than MaxSessionEventBytes is sent without being kept. Zero
	// means DefaultMaxSessionEvents and DefaultMaxSessionEventBytes.
	MaxSessionEvents     int
	MaxSessionEventBytes int64
	// MaxSessionRequests bounds the POST requests one session serves:
	// mcp-go keeps a little state for each response stream of a session
	// (some hundreds of bytes) until the session ends, so a session is
	// ended once it has served this many and none is in flight. Past the
	// bound, a request is served while others of the session are in
	// flight (up to MaxInFlight more), so that the client does not drop
	// the session under them; else it is refused with 404, which tells
	// the client to initialize a new session. Zero means
	// DefaultMaxSessionRequests.
	MaxSessionRequests int
}

// withDefaults returns l with its zero fields set to their defaults, or an
// error naming a negative field.
func (l Limits) withDefaults() (Limits, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxSessions", int64(l.MaxSessions)}, {"SessionIdleTTL", int64(l.SessionIdleTTL)},
		{"MaxInFlight", int64(l.MaxInFlight)}, {"MaxBodyBytes", l.MaxBodyBytes},
		{"BodyTimeout", int64(l.BodyTimeout)}, {"WriteStall", int64(l.WriteStall)},
		{"MaxSessionEvents", int64(l.MaxSessionEvents)}, {"MaxSessionEventBytes", l.MaxSessionEventBytes},
		{"MaxSessionRequests", int64(l.MaxSessionRequests)},
	} {
		if f.v < 0 {
			return l, fmt.Errorf("serve: Limits.%s is negative; use 0 for its default or a positive bound", f.name)
		}
	}
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def((*int64)(&l.SessionIdleTTL), int64(DefaultSessionIdleTTL))
	def(&l.MaxBodyBytes, DefaultMaxBodyBytes)
	def((*int64)(&l.BodyTimeout), int64(DefaultBodyTimeout))
	def((*int64)(&l.WriteStall), int64(DefaultWriteStall))
	def(&l.MaxSessionEventBytes, DefaultMaxSessionEventBytes)
	if l.MaxSessions == 0 {
		l.MaxSessions = DefaultMaxSessions
	}
	if l.MaxInFlight == 0 {
		l.MaxInFlight = DefaultMaxInFlight
	}
	if l.MaxSessionEvents == 0 {
		l.MaxSessionEvents = DefaultMaxSessionEvents
	}
	if l.MaxSessionRequests == 0 {
		l.MaxSessionRequests = DefaultMaxSessionRequests
	}
	return l, nil
}

// Handler serves an MCP server over streamable HTTP within [Limits]. It
// serves only the sessions it issued: a request naming any other session
// ID is refused with 404 Not Found, one that names none where a session is
// needed (a GET or DELETE) with 400 Bad Request. Make one with
// [NewHandler] and end it with [Handler.Shutdown].
type Handler struct {
	mcp      *server.StreamableHTTPServer
	next     http.Handler
	sessions *sessions
	lim      Limits
	inflight chan struct{}
	hs       *http.Server

	stopSweep context.CancelFunc
	swept     chan struct{} // closed when the sweeper has stopped
}

// NewHandler returns a Handler serving s, authenticated by auth's token
// when it has one, within lim. The error names a field of lim that is
// invalid.
func NewHandler(s *server.MCPServer, auth Auth, lim Limits) (*Handler, error) {
	lim, err := lim.withDefaults()
	if err != nil {
		return nil, err
	}
	h := &Handler{sessions: newSessions(lim.MaxSessions, lim.MaxSessionRequests, lim.MaxInFlight), lim: lim, inflight: make(chan struct{}, lim.MaxInFlight)}
	h.hs = &http.Server{Handler: h, ReadHeaderTimeout: guard.DefaultReadHeaderTimeout,
		IdleTimeout: guard.DefaultIdleTimeout, MaxHeaderBytes: guard.DefaultMaxHeaderBytes}
	h.mcp = server.NewStreamableHTTPServer(s,
		server.WithStreamableHTTPServer(h.hs),
		server.WithSessionIdManager(h.sessions),
		server.WithEventStore(newEventStore(h.sessions, lim.MaxSessionEvents, lim.MaxSessionEventBytes)),
		// Idle sessions are ended by h's own sweeper: mcp-go's takes a
		// session with a long call in flight for an idle one.
		server.WithHeartbeatInterval(max(lim.SessionIdleTTL/4, time.Second)))
	h.next = requireToken(auth.Token, http.HandlerFunc(h.serve))
	ctx, stop := context.WithCancel(context.Background())
	h.stopSweep, h.swept = stop, make(chan struct{})
	go h.sweep(ctx)
	return h, nil
}

// sweep ends, every half SessionIdleTTL (at least every second), the
// sessions that have had no request in flight for SessionIdleTTL, until ctx
// ends.
func (h *Handler) sweep(ctx context.Context) {
	defer close(h.swept)
	t := time.NewTicker(max(h.lim.SessionIdleTTL/2, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, id := range h.sessions.expire(time.Now().Add(-h.lim.SessionIdleTTL)) {
				h.end(id)
			}
		}
	}
}

// ServeHTTP serves the request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.next.ServeHTTP(w, r) }

// Sessions returns how many sessions are live.
func (h *Handler) Sessions() int { return h.sessions.count() }

// Shutdown stops the sweeping of idle sessions and shuts down the
// http.Server of [Handler.Server] gracefully, ending every session (which
// closes its streams) until the server's requests are done or ctx ends.
// Call it once the handler is no longer needed, whether or not that
// server was used.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.stopSweep()
	select {
	case <-h.swept:
	case <-ctx.Done():
		return ctx.Err()
	}
	return h.mcp.Shutdown(ctx)
}

// Server returns the http.Server for h, its Handler h (replace it to mount
// h on a mux): it has timeouts for reading a request's headers and for idle
// keep-alive connections and a bound on header size, and no ReadTimeout or
// WriteTimeout, which would cut streams; h bounds request bodies and each
// write itself. It is the same server on every call.
func (h *Handler) Server() *http.Server { return h.hs }

// serve applies the limits to an authenticated request and passes it to
// the MCP server.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	select {
	case h.inflight <- struct{}{}:
		defer func() { <-h.inflight }()
	default:
		refuse(w, http.StatusServiceUnavailable, fmt.Sprintf("serve: %d requests are in flight (Limits.MaxInFlight); retry later", h.lim.MaxInFlight))
		return
	}
	// The body is read with the server's own writer: the stallWriter
	// cannot set the connection's read deadline, and BoundBody would skip
	// the body's time limit.
	var body []byte
	if r.Method == http.MethodPost {
		var ok bool
		if body, ok = h.readBody(w, r); !ok {
			return
		}
	}
	// A session is not idle while one of its requests is served.
	if id := r.Header.Get(server.HeaderKeySessionID); id != "" && h.sessions.enter(id) {
		defer h.sessions.leave(id)
	}
	sw := &stallWriter{w: w, rc: http.NewResponseController(w), stall: h.lim.WriteStall}
	defer sw.detach()
	w = sw
	switch r.Method {
	case http.MethodPost:
		method := rpcMethod(body)
		if method == "initialize" {
			if !h.sessions.reserve() {
				refuse(w, http.StatusServiceUnavailable, fmt.Sprintf(
					"serve: %d sessions are live (Limits.MaxSessions); end one with DELETE or retry once an idle one has expired", h.lim.MaxSessions))
				return
			}
			defer h.sessions.release()
		} else if id := r.Header.Get(server.HeaderKeySessionID); id != "" && method != "" {
			// Requests and notifications count; the client's answers to
			// the server's requests (such as the listening stream's
			// pings) do not.
			switch h.sessions.begin(id) {
			case spent:
				refuse(w, http.StatusNotFound, fmt.Sprintf(
					"serve: the session has served %d requests (Limits.MaxSessionRequests) and is ending: initialize a new one", h.lim.MaxSessionRequests))
				return
			case counted:
				defer func() {
					if h.sessions.done(id) {
						h.end(id)
					}
				}()
			}
		}
	case http.MethodGet, http.MethodDelete:
		// A GET opens a session for any ID it names (or a new ID when it
		// names none), so only IDs this handler issued pass. Clients of
		// protocol 2026-07-28 have no sessions; the MCP server answers
		// their GET and DELETE itself.
		if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
			break
		}
		id := r.Header.Get(server.HeaderKeySessionID)
		if id == "" {
			refuse(w, http.StatusBadRequest, "serve: "+r.Method+" needs the header "+server.HeaderKeySessionID+" with the ID the initialize response gave")
			return
		}
		if !h.sessions.has(id) {
			refuse(w, http.StatusNotFound, "serve: session not found; it ended or was never issued: initialize a new one")
			return
		}
		if testHookSessionChecked != nil {
			testHookSessionChecked(h, id)
		}
		if r.Method == http.MethodGet {
			// The session may end between the check and the MCP server
			// taking up the stream, which then opens the session again:
			// checked once more when the stream starts (after the MCP
			// server registered the session), and ended if it has ended.
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			r = r.WithContext(ctx)
			sw.check = func() bool {
				if h.sessions.has(id) {
					return true
				}
				cancel()
				return false
			}
			defer func() {
				if sw.refusedStream() {
					h.end(id)
				}
			}()
		}
	}
	h.mcp.ServeHTTP(w, r)
}

// testHookSessionChecked, when set by a test, runs after a GET or DELETE
// passed the check that its session is live.
var testHookSessionChecked func(h *Handler, id string)

// end ends the session id, as a DELETE from its client would.
func (h *Handler) end(id string) {
	r, err := http.NewRequestWithContext(context.Background(), http.MethodDelete, "/mcp", nil)
	if err != nil {
		return
	}
	r.Host = "localhost"
	r.Header.Set(server.HeaderKeySessionID, id)
	h.mcp.ServeHTTP(discard{}, r)
}

// discard is a ResponseWriter that drops the response.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}

// readBody reads r's body within the body limits and puts it back for the
// MCP server. It answers the request itself, and returns false, when the
// body is too large or too slow.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	guard.BoundBody(w, r, h.lim.MaxBodyBytes, h.lim.BodyTimeout)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("serve: the request body exceeds %d bytes (Limits.MaxBodyBytes)", h.lim.MaxBodyBytes))
		case guard.BodyTimedOut(err):
			refuse(w, http.StatusRequestTimeout, fmt.Sprintf("serve: the request body did not arrive within %s (Limits.BodyTimeout)", h.lim.BodyTimeout))
		default:
			refuse(w, http.StatusBadRequest, "serve: reading the request body: "+err.Error())
		}
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// rpcMethod returns the method of the JSON-RPC message body, "" for a
// response or what is not JSON-RPC.
func rpcMethod(body []byte) string {
	var msg struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return ""
	}
	return msg.Method
}

// refuse answers a refused request with status and msg.
func refuse(w http.ResponseWriter, status int, msg string) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	http.Error(w, msg, status)
}

// stallWriter sets a write deadline of stall from now before each write and
// flush, and lifts it after, so that a client that stops reading holds a handler (and a stream
// of a session) for at most stall per write rather than forever, while a
// stream that writes now and then may stay open for as long as it lasts.
//
// mcp-go keeps the writer of each response stream until the stream's
// session ends; detach, once the handler has returned, lets go of the
// ResponseWriter (and the request it holds) so that only this small
// struct stays.
type stallWriter struct {
	mu    sync.Mutex
	w     http.ResponseWriter // nil once detached
	rc    *http.ResponseController
	stall time.Duration
	// check, when set, runs before the response's header is written; when
	// it fails, a 404 is written instead and every write after fails.
	check   func() bool
	refused bool
}

// refusedStream reports whether check failed.
func (w *stallWriter) refusedStream() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refused
}

// errDetached is what a write after the handler returned fails with.
var errDetached = errors.New("serve: the response is over")

func (w *stallWriter) detach() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.w, w.rc = nil, nil
}

// Header returns the response's header.
func (w *stallWriter) Header() http.Header {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.w == nil {
		return http.Header{}
	}
	return w.w.Header()
}

// WriteHeader sends the response's status and header.
func (w *stallWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.w == nil || w.refused {
		return
	}
	if check := w.check; check != nil {
		w.check = nil
		if !check() {
			w.refused = true
			w.w.Header().Del("Content-Type")
			http.Error(w.w, "serve: session not found; it ended: initialize a new one", http.StatusNotFound)
			return
		}
	}
	w.w.WriteHeader(code)
}

// Write writes p within the stall bound.
func (w *stallWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.w == nil || w.refused {
		return 0, errDetached
	}
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.stall))
	n, err := w.w.Write(p)
	if err == nil {
		w.clearDeadline()
	}
	return n, err
}

// clearDeadline lifts the write deadline once a write is done: over HTTP/2
// a deadline left in place is a timer that resets a stream quiet for longer
// than stall. Called with mu held.
func (w *stallWriter) clearDeadline() { _ = w.rc.SetWriteDeadline(time.Time{}) }

// Flush sends what is buffered to the client within the stall bound.
func (w *stallWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.w != nil && !w.refused {
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.stall))
		if w.rc.Flush() == nil {
			w.clearDeadline()
		}
	}
}

// SetWriteDeadline sets the connection's write deadline, for
// http.ResponseController (mcp-go bounds replays with it); the next write
// sets its own.
func (w *stallWriter) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.w == nil {
		return errDetached
	}
	return w.rc.SetWriteDeadline(t)
}

// sessions is the set of live session IDs: the MCP server's session ID
// manager, which issues them, validates them and forgets them when they
// end, and the bounds on how many there are and how many requests each
// serves.
type sessions struct {
	mu          sync.Mutex
	live        map[string]*sessionUse
	reserved    int // initialize requests in flight
	max         int
	maxRequests int
	// maxOver bounds the requests served past maxRequests while others
	// are in flight.
	maxOver int
}

// sessionUse counts a session's POST requests (served, inflight) and all
// its requests in flight (active), and says when the last of those ended.
type sessionUse struct {
	served, inflight int
	active           int
	idleSince        time.Time
}

// enter counts a request of session id as in flight, and reports whether
// the session is live (else there is nothing to leave).
func (s *sessions) enter(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.live[id]
	if u == nil {
		return false
	}
	u.active++
	return true
}

// leave ends a request enter counted.
func (s *sessions) leave(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.live[id]; u != nil {
		u.active--
		if u.active == 0 {
			u.idleSince = time.Now()
		}
	}
}

// expire forgets, and returns, the sessions that have had no request in
// flight since before t: the caller ends them in the MCP server.
func (s *sessions) expire(t time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, u := range s.live {
		if u.active == 0 && u.idleSince.Before(t) {
			delete(s.live, id)
			ids = append(ids, id)
		}
	}
	return ids
}

func newSessions(max, maxRequests, maxOver int) *sessions {
	return &sessions{live: map[string]*sessionUse{}, max: max, maxRequests: maxRequests, maxOver: maxOver}
}

// What begin did with a request.
const (
	uncounted = iota // the session is not live (the MCP server refuses the request)
	counted          // counted: call done when it ends
	spent            // refused: the session has served its requests
)

// begin counts a POST request on session id.
func (s *sessions) begin(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.live[id]
	switch {
	case u == nil:
		return uncounted
	case u.served >= s.maxRequests && (u.inflight == 0 || u.served >= s.maxRequests+s.maxOver):
		return spent
	}
	u.served++
	u.inflight++
	return counted
}

// done ends a request begin counted, and reports whether its session
// has served its requests and has none in flight, so is to end.
func (s *sessions) done(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.live[id]
	if u == nil {
		return false
	}
	u.inflight--
	return u.served >= s.maxRequests && u.inflight == 0
}

// reserve takes a place for a session an initialize request is about to
// open, and reports whether there was one.
func (s *sessions) reserve() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.live)+s.reserved >= s.max {
		return false
	}
	s.reserved++
	return true
}

// release gives back the place reserve took, once the initialize request
// is done (its session, if it opened one, counts as live).
func (s *sessions) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserved--
}

// Generate issues a new session ID.
func (s *sessions) Generate() string {
	id := "mcp-session-" + uuid.NewString()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live[id] = &sessionUse{idleSince: time.Now()}
	return id
}

// Validate fails for an ID that is not live.
func (s *sessions) Validate(id string) (isTerminated bool, err error) {
	if !s.has(id) {
		return false, errors.New("session not found")
	}
	return false, nil
}

// Terminate forgets id.
func (s *sessions) Terminate(id string) (isNotAllowed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, id)
	return false, nil
}

func (s *sessions) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.live[id]
	return ok
}

func (s *sessions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

// eventStore is a server.EventStore that keeps, per live session, at most
// maxEvents messages and maxBytes bytes of them, dropping the oldest.
// Messages of sessions that are not live are not kept.
type eventStore struct {
	sessions  *sessions
	maxEvents int
	maxBytes  int64

	mu   sync.Mutex
	seq  int64
	logs map[string]*eventLog
}

// eventLog is one session's kept messages, oldest first; their sequence
// numbers (their event IDs) increase.
type eventLog struct {
	events []storedEvent
	bytes  int64
}

type storedEvent struct {
	seq     int64
	stream  string
	message json.RawMessage
}

// errNotKept is what StoreEvent fails with for a message it does not keep;
// the MCP server then sends it without an event ID.
var errNotKept = errors.New("serve: message not kept for replay")

func newEventStore(s *sessions, maxEvents int, maxBytes int64) *eventStore {
	return &eventStore{sessions: s, maxEvents: maxEvents, maxBytes: maxBytes, logs: map[string]*eventLog{}}
}

// StoreEvent keeps message as the next event of streamID and returns its ID.
func (st *eventStore) StoreEvent(_ context.Context, sessionID, streamID string, message json.RawMessage) (string, error) {
	if int64(len(message)) > st.maxBytes {
		return "", fmt.Errorf("%w: it has %d bytes, more than Limits.MaxSessionEventBytes (%d)", errNotKept, len(message), st.maxBytes)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	// Checked under mu: a session ends (Terminate) before its events are
	// purged (PurgeSession, which takes mu), so nothing is kept after the
	// purge.
	if !st.sessions.has(sessionID) {
		return "", fmt.Errorf("%w: the session is not live", errNotKept)
	}
	log := st.logs[sessionID]
	if log == nil {
		log = &eventLog{}
		st.logs[sessionID] = log
	}
	st.seq++
	log.events = append(log.events, storedEvent{seq: st.seq, stream: streamID, message: bytes.Clone(message)})
	log.bytes += int64(len(message))
	drop := 0
	for len(log.events)-drop > st.maxEvents || log.bytes > st.maxBytes {
		log.bytes -= int64(len(log.events[drop].message))
		log.events[drop] = storedEvent{}
		drop++
	}
	// Reslicing from the front leaves the dropped slots behind; append
	// copies only the kept ones when it grows the array, so the array stays
	// within about twice the bound.
	log.events = log.events[drop:]
	return strconv.FormatInt(st.seq, 10), nil
}

// ReplayEventsAfter sends the kept events of lastEventID's stream that
// follow it, and returns the stream's ID. An ID never issued to the
// session, or dropped since, is server.ErrUnknownEventID.
func (st *eventStore) ReplayEventsAfter(_ context.Context, sessionID, lastEventID string, send func(eventID string, message json.RawMessage) error) (string, error) {
	seq, err := strconv.ParseInt(lastEventID, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%w: %q", server.ErrUnknownEventID, lastEventID)
	}
	st.mu.Lock()
	var stream string
	var tail []storedEvent
	found := false
	if log := st.logs[sessionID]; log != nil {
		var i int
		i, found = slices.BinarySearchFunc(log.events, seq, func(ev storedEvent, seq int64) int { return cmp.Compare(ev.seq, seq) })
		if found {
			stream = log.events[i].stream
			for _, next := range log.events[i+1:] {
				if next.stream == stream {
					tail = append(tail, next)
				}
			}
		}
	}
	st.mu.Unlock()
	if !found {
		return "", fmt.Errorf("%w: %q", server.ErrUnknownEventID, lastEventID)
	}
	for _, ev := range tail {
		if err := send(strconv.FormatInt(ev.seq, 10), ev.message); err != nil {
			return "", err
		}
	}
	return stream, nil
}

// PurgeSession drops every event of sessionID.
func (st *eventStore) PurgeSession(_ context.Context, sessionID string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.logs, sessionID)
	return nil
}

// kept returns how many events and bytes sessionID keeps.
func (st *eventStore) kept(sessionID string) (events int, bytes int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if log := st.logs[sessionID]; log != nil {
		return len(log.events), log.bytes
	}
	return 0, 0
}
