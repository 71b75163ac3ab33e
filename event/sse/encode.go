package sse

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/event"
)

// AppendEvent appends ev in SSE framing to dst:
//
//	id: 7
//	event: tool.progress
//	data: {"type":"tool.progress","request_id":"req-1","seq":7,...}
//
// followed by a blank line. The id is the event's sequence number, which a
// reconnecting client sends back as Last-Event-ID. When named is false the
// event: line is left out, so browsers deliver the event to
// EventSource.onmessage rather than to a listener for its type. For the
// common event types it does not allocate once dst has room.
//
// When named, it returns an error, and dst unchanged, for a type holding
// CR, LF or NUL: written on the event: line such a type would end it and
// add lines of its own (a forged id or message), and a decoded event from
// elsewhere may carry one. Unnamed, the type goes only into the JSON data,
// which escapes those characters.
func AppendEvent(dst []byte, ev event.Event, named bool) ([]byte, error) {
	t := ev.Type
	if t == "" && ev.Payload != nil {
		t = ev.Payload.EventType()
	}
	if named && strings.ContainsAny(string(t), "\r\n\x00") {
		return dst, fmt.Errorf("sse: event type %q holds CR, LF or NUL, which would break the SSE framing of its event: line; name the type without line breaks or NUL, or write unnamed events (Config.Unnamed)", t)
	}
	start := len(dst)
	dst = append(dst, "id: "...)
	dst = strconv.AppendUint(dst, ev.Seq, 10)
	if named {
		dst = append(dst, "\nevent: "...)
		dst = append(dst, t...)
	}
	dst = append(dst, "\ndata: "...)
	dataStart := len(dst)
	dst, err := ev.AppendJSON(dst)
	if err != nil {
		return dst[:start], err
	}
	if _, raw := ev.Payload.(event.Raw); raw && bytes.ContainsAny(dst[dataStart:], "\r\n") {
		// Only a hand-made Raw payload can hold raw line breaks; give each
		// line its own data: field so the framing survives.
		data := append([]byte(nil), dst[dataStart:]...)
		dst = dst[:dataStart]
		for i, line := range bytes.FieldsFunc(data, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if i > 0 {
				dst = append(dst, "\ndata: "...)
			}
			dst = append(dst, line...)
		}
	}
	return append(dst, "\n\n"...), nil
}

// Writer writes events to one HTTP response as Server-Sent Events, flushing
// after each. It sets the response headers on its first write. It is the
// low-level piece: [Stream] adds heartbeats, a replay buffer and resumption.
// A Writer is not safe for concurrent use.
type Writer struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	named   bool
	retry   time.Duration
	buf     []byte
	started bool
}

// NewWriter returns a Writer for w. Of cfg it uses Unnamed and Retry.
func NewWriter(w http.ResponseWriter, cfg Config) *Writer {
	return &Writer{w: w, rc: http.NewResponseController(w), named: !cfg.Unnamed, retry: cfg.Retry, buf: make([]byte, 0, 1024)}
}

// WriteEvent writes ev and flushes it to the client.
func (w *Writer) WriteEvent(ev event.Event) error {
	b, err := AppendEvent(w.buf[:0], ev, w.named)
	if err != nil {
		return err
	}
	w.buf = b
	return w.write(b)
}

// Heartbeat writes a comment line, which clients ignore, to keep proxies
// from closing an idle connection and to notice a client that has gone.
// Call it every [DefaultHeartbeat] or so while no event is due: a
// [Follow] client drops a connection quiet for its IdleTimeout.
func (w *Writer) Heartbeat() error { return w.write([]byte(": heartbeat\n\n")) }

// Start sends the headers (and the retry field, if configured) without an
// event, so the client sees the stream open at once.
func (w *Writer) Start() error { return w.write(nil) }

func (w *Writer) write(b []byte) error {
	if !w.started {
		w.started = true
		h := w.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
		w.w.WriteHeader(http.StatusOK)
		if w.retry > 0 {
			prefix := strconv.AppendInt([]byte("retry: "), w.retry.Milliseconds(), 10)
			b = append(append(prefix, "\n\n"...), b...)
		}
	}
	if len(b) > 0 {
		if _, err := w.w.Write(b); err != nil {
			return fmt.Errorf("sse: writing to the client: %w", err)
		}
	}
	if err := w.rc.Flush(); err != nil {
		if errors.Is(err, http.ErrNotSupported) {
			return fmt.Errorf("sse: the http.ResponseWriter cannot flush, so events would be held back; serve without a buffering middleware: %w", err)
		}
		return fmt.Errorf("sse: flushing to the client: %w", err)
	}
	return nil
}
