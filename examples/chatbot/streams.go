package chatbot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/sse"
)

// streamRegistry keeps the SSE streams of resumable turns by request id,
// at most max of them. A stream stays while its turn runs and for linger
// after it ends, so that a client whose connection dropped near the end
// can still fetch the rest. A principal holds at most its share of the
// entries, running or lingering: at its share, its own turn that ended
// first makes room; when the registry is full, the turn that ended first
// makes room, the requesting principal's own before anyone else's.
type streamRegistry struct {
	max    int
	linger time.Duration

	mu      sync.Mutex
	entries map[string]*streamEntry
	closed  bool
}

type streamEntry struct {
	stream *sse.Stream
	owner  string                  // the principal whose turn it is
	stop   context.CancelCauseFunc // cancels the turn
	timer  *time.Timer             // removes the entry once the linger has passed
	// endedAt is when the turn ended (see ended); zero until then.
	endedAt time.Time
}

// errTooManyResumable is a principal's resumable turn over its share.
var errTooManyResumable = errors.New("chatbot: too many running resumable turns of yours")

// add registers s, owner's stream, under id. It fails when id already has
// a stream, when the registry holds max entries (running or lingering)
// and none has ended, or when owner holds perOwner (if positive) entries,
// running or lingering, and none of its own has ended. An ended turn's
// entry makes room as evictEnded says.
func (sr *streamRegistry) add(id, owner string, perOwner int, s *sse.Stream, stop context.CancelCauseFunc) error {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if sr.closed {
		return ErrClosed
	}
	if sr.entries == nil {
		sr.entries = map[string]*streamEntry{}
	}
	if _, ok := sr.entries[id]; ok {
		return errRequestIDUsed(unscoped(owner, id)) // as the client named it
	}
	if perOwner > 0 {
		// Lingering entries count too: each holds its replay buffer.
		held := 0
		for _, e := range sr.entries {
			if e.owner == owner {
				held++
			}
		}
		if held >= perOwner && !sr.evictEnded(owner, true) {
			return fmt.Errorf("%w: %d (Config.MaxStreams); wait for one to end", errTooManyResumable, held)
		}
	}
	if len(sr.entries) >= sr.max && !sr.evictEnded(owner, false) {
		return fmt.Errorf("%w: %d resumable turns are running (Config.MaxResumableTurns); retry later or send the turn without \"resumable\"", ErrBusy, len(sr.entries))
	}
	sr.entries[id] = &streamEntry{stream: s, owner: owner, stop: stop}
	return nil
}

// errRequestIDUsed is the error of a resumable turn whose request id
// already names one of the principal's resumable turns.
func errRequestIDUsed(requestID string) error {
	return &RequestError{Field: "request_id", Reason: fmt.Sprintf("%q already names a resumable turn; use a new request id, or resume it with GET /api/v1/chat/stream/%s", requestID, requestID)}
}

// isDone reports whether s's run has ended.
func isDone(s *sse.Stream) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

// evictEnded removes the stream of the turn of owner that ended first,
// or, when owner has none and ownOnly is false, of anyone's turn that
// ended first; it reports whether it removed one. A turn that ended but
// whose end is not recorded yet counts as ended last. sr.mu is held.
func (sr *streamRegistry) evictEnded(owner string, ownOnly bool) bool {
	var ownID, anyID string
	var own, anyone *streamEntry
	before := func(a, b *streamEntry) bool {
		return b == nil || !a.endedAt.IsZero() && (b.endedAt.IsZero() || a.endedAt.Before(b.endedAt))
	}
	for id, e := range sr.entries {
		if !isDone(e.stream) {
			continue
		}
		if e.owner == owner && before(e, own) {
			ownID, own = id, e
		}
		if before(e, anyone) {
			anyID, anyone = id, e
		}
	}
	id, e := ownID, own
	if e == nil && !ownOnly {
		id, e = anyID, anyone
	}
	if e == nil {
		return false
	}
	if e.timer != nil {
		e.timer.Stop()
	}
	delete(sr.entries, id)
	return true
}

// get returns the stream of id.
func (sr *streamRegistry) get(id string) (*sse.Stream, bool) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	e, ok := sr.entries[id]
	if !ok {
		return nil, false
	}
	return e.stream, true
}

// stop cancels id's turn with ErrStopped. found reports whether id names
// a stream, running whether its turn was still running: a turn that has
// ended is left as it is.
func (sr *streamRegistry) stop(id string) (found, running bool) {
	sr.mu.Lock()
	e, ok := sr.entries[id]
	sr.mu.Unlock()
	if !ok {
		return false, false
	}
	if isDone(e.stream) {
		return true, false
	}
	e.stop(ErrStopped)
	return true, true
}

// ended schedules the removal of id's stream, whose turn has ended, after
// the linger.
func (sr *streamRegistry) ended(id string, s *sse.Stream) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	e, ok := sr.entries[id]
	if !ok || e.stream != s {
		return
	}
	e.endedAt = time.Now()
	e.timer = time.AfterFunc(sr.linger, func() { sr.remove(id, s) })
}

// remove drops id's entry if it still holds s.
func (sr *streamRegistry) remove(id string, s *sse.Stream) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if e, ok := sr.entries[id]; ok && e.stream == s {
		if e.timer != nil {
			e.timer.Stop()
		}
		delete(sr.entries, id)
	}
}

// close drops every entry and refuses new ones.
func (sr *streamRegistry) close() {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	sr.closed = true
	for id, e := range sr.entries {
		if e.timer != nil {
			e.timer.Stop()
		}
		delete(sr.entries, id)
	}
}

// writeTimeout bounds the writing of a response of the HTTP API: a chat
// stream lasts as long as its turn, and a minute more for the rest.
func (c Config) writeTimeout() time.Duration { return c.TurnTimeout + time.Minute }

// stallWriter is a chat stream's response whose every write of at most
// stallChunk bytes, and every flush, must end within Config.WriteStall: a
// client that reads nothing for that long (the connection's buffers full)
// fails the write, and the stream's
// ServeHTTP returns, which frees the principal's share of
// Config.MaxStreams and ends a turn that is not resumable. Between writes
// the connection's write deadline is the response's own (limit, as the
// guard sets it).
type stallWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
	limit time.Time
}

// stallWriter returns w with its writes bounded by Config.WriteStall (w
// itself when it is negative).
func (b *Bot) stallWriter(w http.ResponseWriter) http.ResponseWriter {
	if b.cfg.WriteStall <= 0 {
		return w
	}
	return &stallWriter{ResponseWriter: w, rc: http.NewResponseController(w), stall: b.cfg.WriteStall,
		limit: time.Now().Add(b.cfg.writeTimeout())}
}

// bounded runs write with the connection's write deadline WriteStall away
// (or the response's, if sooner).
func (s *stallWriter) bounded(write func() error) error {
	deadline := time.Now().Add(s.stall)
	if deadline.After(s.limit) {
		deadline = s.limit
	}
	if s.rc.SetWriteDeadline(deadline) != nil {
		return write() // a writer without deadlines (a test's recorder)
	}
	err := write()
	_ = s.rc.SetWriteDeadline(s.limit)
	return err
}

// stallChunk is the most a stallWriter writes under one deadline: a
// longer write (a resumed stream's replay) goes out in pieces, each with
// WriteStall of its own, so that a client that reads slowly but steadily
// is not disconnected.
const stallChunk = 32 << 10

// Write writes p in pieces of at most stallChunk bytes, each of which must
// be written within WriteStall.
func (s *stallWriter) Write(p []byte) (n int, err error) {
	for len(p) > 0 {
		piece := p[:min(len(p), stallChunk)]
		var m int
		err = s.bounded(func() error {
			var err error
			m, err = s.ResponseWriter.Write(piece)
			return err
		})
		n += m
		if err != nil {
			return n, err
		}
		p = p[len(piece):]
	}
	return n, nil
}

// FlushError flushes within the stall bound (for http.ResponseController).
func (s *stallWriter) FlushError() error { return s.bounded(s.rc.Flush) }

// Unwrap returns the response it bounds (for http.ResponseController).
func (s *stallWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// nonResumableReplay is the replay buffer of a turn that only its first
// connection reads: it only has to hold the events not yet written.
const nonResumableReplay = 64

// serveChat streams one turn as Server-Sent Events through an sse.Stream.
//
// By default the turn runs under the request's context, so a client that
// goes away cancels it and its MCP calls. A request with "resumable": true
// detaches the turn from the connection (it runs until it ends or
// Config.TurnTimeout passes) and registers its stream under the request
// id, so that a client that lost the connection continues with GET
// /api/v1/chat/stream/{request_id} and a Last-Event-ID header.
func (b *Bot) serveChat(w http.ResponseWriter, r *http.Request) {
	req, err := b.chatRequest(w, r)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	w.Header().Set("X-Request-ID", req.RequestID)
	var (
		ctx    context.Context
		cancel context.CancelCauseFunc
		stream *sse.Stream
	)
	// A principal's resumable turns are kept under its own names: another
	// principal's turn with the same request id is another stream.
	principal := PrincipalFromContext(r.Context())
	key := scoped(principal, req.RequestID)
	if req.Resumable {
		tctx, cancelTimeout := context.WithTimeout(context.WithoutCancel(r.Context()), b.cfg.TurnTimeout)
		var cancelCause context.CancelCauseFunc
		ctx, cancelCause = context.WithCancelCause(tctx)
		cancel = func(cause error) {
			cancelCause(cause)
			cancelTimeout()
		}
		// A turn whose events wait unread stops after ResumeWait
		// (sse.ErrNoReader): no client may ever come back for them, and
		// it holds a running slot. With a journal, the events it holds
		// count as read (see cluster.tee).
		stream = sse.NewStream(sse.Config{Replay: b.cfg.ResumeReplay, ReaderWait: max(b.cfg.ResumeWait, 0), Logger: b.log})
		perPrincipal := b.cfg.MaxStreams // a principal's share of MaxResumableTurns
		if b.guard.Open() {
			perPrincipal = 0
		}
		if err := b.streams.add(key, principal, perPrincipal, stream, cancel); err != nil {
			cancel(nil)
			b.writeError(w, r, err)
			return
		}
		if b.cluster != nil {
			// The journal keeps a turn's events after this instance
			// forgot it, and another instance's turns: a second turn
			// under the same key would mix into the first one's events.
			if err := b.cluster.unused(r.Context(), journalKey(principal, req.RequestID), req.RequestID); err != nil {
				b.streams.remove(key, stream)
				cancel(nil)
				b.writeError(w, r, err)
				return
			}
		}
	} else {
		ctx, cancel = context.WithCancelCause(r.Context())
		stream = sse.NewStream(sse.Config{Replay: nonResumableReplay, Logger: b.log})
	}
	// Close cancels the stream's feed too. Belonging to no conversation,
	// it has none to wait for: track does not fail.
	untrack, _ := b.turnsRun.track(ctx, &cancel, "")

	// Pull the first event here, so that a turn that cannot start (the bot
	// is closing) gets a plain error response instead of a stream.
	next, stop := iter.Pull2(b.Chat(ctx, req))
	first, err, ok := next()
	if !ok || err != nil {
		stop()
		if err == nil {
			err = fmt.Errorf("chatbot: turn %s ended before its first event", req.RequestID)
		}
		// Finish the stream, so that a client resuming it meanwhile ends.
		_ = stream.Run(ctx, func(yield func(event.Event, error) bool) { yield(event.Event{}, err) })
		if req.Resumable {
			b.streams.remove(key, stream)
		}
		untrack()
		cancel(nil)
		b.writeError(w, r, err)
		return
	}
	firstIn := make(chan struct{}) // closed once the stream holds the first event
	var lastSeq uint64             // of the newest event given to the stream; read after Run
	events := func(yield func(event.Event, error) bool) {
		defer stop()
		last := first
		ok := yield(first, nil)
		close(firstIn)
		if !ok {
			return
		}
		lastSeq = first.Seq // only once the stream took it: no_reader follows it
		for {
			ev, err, ok := next()
			switch {
			case !ok:
				return
			case err != nil && (ctx.Err() == nil || errors.Is(context.Cause(ctx), ErrClosed) || errors.Is(context.Cause(ctx), ErrStopped)):
				// The turn failed, or Close ended it: tell the client in
				// the stream, after the events before the failure (the
				// details of an internal failure are in the log).
				msg, code := publicError(cmp.Or(context.Cause(ctx), err), req.RequestID)
				yield(event.Event{Type: event.TypeError, RequestID: req.RequestID, Seq: last.Seq + 1,
					Time: last.Time, Payload: event.Error{Message: msg, Code: code}}, nil)
				return
			case err != nil:
				yield(event.Event{}, err)
				return
			}
			last = ev
			if !yield(ev, nil) {
				return
			}
			lastSeq = ev.Seq
		}
	}
	b.streamsRunning.Add(1)
	go func() {
		defer b.streamsRunning.Done()
		defer cancel(nil)
		defer untrack()
		run := events
		jkey := journalKey(principal, req.RequestID)
		if req.Resumable && b.cluster != nil {
			// For clients resuming on another instance: an event the
			// journal holds is delivered, so the turn does not wait for a
			// client here (nor stop after ResumeWait) while one reads it
			// elsewhere.
			run = b.cluster.tee(ctx, jkey, events, stream.MarkSent)
		}
		if err := stream.Run(ctx, run); errors.Is(err, sse.ErrNoReader) {
			// Stopped (by the deferred cancel) with its events unread:
			// clients resuming here get the stream's no_reader error;
			// those resuming elsewhere, the same from the journal.
			b.log.Info("chatbot: resumable turn stopped: no client read its events", zap.String("request_id", req.RequestID),
				zap.Int("resume_replay", b.cfg.ResumeReplay), zap.Duration("resume_wait", b.cfg.ResumeWait))
			if b.cluster != nil {
				b.cluster.append(ctx, jkey, event.Event{Type: event.TypeError, RequestID: req.RequestID, Seq: lastSeq + 1, Time: time.Now(),
					Payload: event.Error{Code: "no_reader", Message: err.Error()}})
			}
		}
		if req.Resumable {
			b.streams.ended(key, stream)
			if b.cluster != nil {
				b.cluster.end(jkey)
			}
		}
	}()

	w.Header().Set("X-Conversation-ID", req.ConversationID)
	// The POST starts the turn; it does not resume one.
	r.Header.Del("Last-Event-ID")
	q := r.URL.Query()
	if q.Has("lastEventId") {
		q.Del("lastEventId")
		r.URL.RawQuery = q.Encode()
	}
	// Serve once the first event is in the stream, so that it goes out
	// with the headers in one write.
	select {
	case <-firstIn:
	case <-stream.Done():
	}
	stream.ServeHTTP(b.stallWriter(w), r)
	if !req.Resumable {
		// The client has everything or went away: in both cases the turn
		// is over for it. Cancel what is left and wait for it to stop.
		cancel(nil)
		<-stream.Done()
	}
}

// serveStop serves DELETE /api/v1/chat/stream/{request_id}: it stops a
// resumable turn of the caller's principal. The turn's stream ends with an
// error event with code "cancelled" (once the turn has stopped), and the
// conversation takes new turns. A turn that already ended is left as it
// is; an unknown request id, or another principal's, is 404.
func (b *Bot) serveStop(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("request_id")
	if !idPattern.MatchString(id) {
		b.writeError(w, r, &RequestError{Field: "request_id", Reason: idRule})
		return
	}
	principal := PrincipalFromContext(r.Context())
	found, running := b.streams.stop(scoped(principal, id))
	ended := func() {
		b.writeError(w, r, fmt.Errorf("%w: %q; its events stay resumable with GET /api/v1/chat/stream/%s until %s after its end", ErrTurnEnded, id, id, b.cfg.ResumeLinger))
	}
	if found && !running {
		ended()
		return
	}
	if !found {
		// Another instance may run it.
		if b.cluster != nil {
			if err := b.cluster.forward(r.Context(), relayRequest{Kind: "stop", Principal: principal, RequestID: id}); err == nil {
				writeJSON(w, http.StatusAccepted, map[string]any{"status": "stopping", "request_id": id})
				return
			} else if errors.Is(err, ErrTurnEnded) {
				ended()
				return
			} else if !errors.Is(err, ErrUnknownStream) {
				b.writeError(w, r, err)
				return
			}
		}
		b.writeError(w, r, fmt.Errorf("%w: %q (only turns sent with \"resumable\": true can be stopped)", ErrUnknownStream, id))
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"status": "stopping", "request_id": id})
}

// serveResume serves GET /api/v1/chat/stream/{request_id}: the events of a
// resumable turn, after the one named by the Last-Event-ID header (or the
// lastEventId query parameter), or all of them without one.
func (b *Bot) serveResume(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("request_id")
	if !idPattern.MatchString(id) {
		b.writeError(w, r, &RequestError{Field: "request_id", Reason: "must be 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit"})
		return
	}
	principal := PrincipalFromContext(r.Context())
	w = b.stallWriter(w)
	stream, ok := b.streams.get(scoped(principal, id))
	if !ok && b.cluster != nil {
		// Another instance ran it, or this one no longer keeps it: the
		// journal has it.
		b.cluster.serveResume(w, r, principal, id)
		return
	}
	if !ok {
		b.writeError(w, r, fmt.Errorf("%w: %q (only turns sent with \"resumable\": true can be resumed, until %s after they end)", ErrUnknownStream, id, b.cfg.ResumeLinger))
		return
	}
	w.Header().Set("X-Request-ID", id)
	stream.ServeHTTP(w, r)
}
