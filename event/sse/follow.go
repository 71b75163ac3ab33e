package sse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	neturl "net/url"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/event"
)

// FollowConfig configures [Follow]. The zero value is usable.
type FollowConfig struct {
	// Client sends the requests. Nil means http.DefaultClient. Its Timeout,
	// if any, bounds a whole connection, so leave it zero for long streams.
	// Follow sends with a copy whose CheckRedirect also keeps Header from
	// other origins (see Header).
	Client *http.Client
	// Header is added to every request (authentication, for example). A
	// redirect to another origin (scheme, host and port) is sent without
	// these fields, as Go's client does with Authorization and Cookie, so
	// that a key such as X-Api-Key goes to no server but the one at url.
	Header http.Header
	// Retry is the wait before a reconnect while the server has not set
	// one with a retry: field. Follow skips it once after a connection the
	// server ended having delivered new events (see [Follow]). Zero means
	// 1s.
	Retry time.Duration
	// IdleTimeout is how long Follow may wait for a byte from the server
	// on a connection (a response header, an event or a heartbeat
	// comment) before it drops the connection and reconnects; the time
	// the loop body spends on an event does not count; it counts as a
	// failed connection unless it delivered a new event. It finds a
	// connection that a network failure left open but dead. Zero means 1
	// minute; a negative value means no limit, for a server that sends no
	// heartbeats. The server's heartbeat interval must be well below it
	// ([Stream]'s [DefaultHeartbeat] is), or every quiet stretch of the
	// stream costs a reconnect and a failure.
	IdleTimeout time.Duration
	// MaxFailures is how many connections in a row may fail (a network
	// error, a 5xx status, or a connection that breaks before delivering a
	// new event) before Follow gives up. Zero means 5.
	MaxFailures int
	// Reader bounds the size of lines and messages.
	Reader Reader
}

// MaxLastEventIDBytes bounds the event id that [Follow] sends back in a
// Last-Event-ID header.
const MaxLastEventIDBytes = 1024

// Follow reads the events of the SSE stream at url (a GET endpoint served by
// [Stream]) the way a browser's EventSource does: when the connection ends
// or breaks it reconnects with a Last-Event-ID header and continues after
// the last event it received, skipping the events the new connection sends
// again (those with a Seq at most the largest one yielded before it). An
// event whose Seq is below the one before it within one connection is
// yielded after an error saying so; one with the same Seq (a notice about
// the event before it) is yielded as it is. An id that cannot
// go back in a header (one holding a control character, or longer than
// [MaxLastEventIDBytes]) is not kept: Follow yields an error saying so and
// goes on, sending the id before it on the next reconnect. It
// ends when the server answers 204 No Content (the stream is over and
// everything was read) or with an error: ctx's, a 4xx status, a response
// that is not text/event-stream, or MaxFailures failed connections in a
// row. A message that does not decode is yielded as an error and reading
// goes on.
//
// Follow waits the reconnection time (the server's retry: field, or
// FollowConfig.Retry) before it reconnects, but for one case: after the
// server ends a connection that delivered new events, it reconnects at
// once, so that a finished stream's 204 ends Follow without a wait; should
// that reconnect end the same way, it waits before the next, so a server
// that closes every connection at once is asked once per reconnection time.
func Follow(ctx context.Context, url string, cfg FollowConfig) iter.Seq2[event.Event, error] {
	client := followClient(cfg.Client, cfg.Header)
	wait := cfg.Retry
	if wait <= 0 {
		wait = time.Second
	}
	maxFailures := cfg.MaxFailures
	if maxFailures <= 0 {
		maxFailures = 5
	}
	idle := cfg.IdleTimeout
	if idle == 0 {
		idle = time.Minute
	}
	errIdle := fmt.Errorf("sse: follow %s: the server sent nothing for %v (FollowConfig.IdleTimeout); reconnecting", url, idle)
	return func(yield func(event.Event, error) bool) {
		var (
			lastID    string
			badID     string // the last id reported as not sendable
			maxSeq    uint64 // the largest Seq yielded
			failures  int
			immediate bool // this connection was opened without the wait
		)
		for {
			if err := ctx.Err(); err != nil {
				yield(event.Event{}, err)
				return
			}
			progressed, ended, err := func() (progressed, ended bool, err error) {
				floor := maxSeq    // the events up to it were yielded before
				var lastSeq uint64 // the Seq of the event before, on this connection
				connCtx, cancel := context.WithCancelCause(ctx)
				defer cancel(nil)
				var timer *time.Timer
				if idle > 0 {
					timer = time.AfterFunc(idle, func() { cancel(errIdle) })
					defer timer.Stop()
				}
				idleErr := func(err error) error {
					if ctx.Err() == nil && errors.Is(context.Cause(connCtx), errIdle) {
						return errIdle
					}
					return err
				}
				req, err := http.NewRequestWithContext(connCtx, http.MethodGet, url, nil)
				if err != nil {
					return false, true, fmt.Errorf("sse: follow: %w", err)
				}
				for k, vs := range cfg.Header {
					req.Header[k] = append([]string(nil), vs...)
				}
				req.Header.Set("Accept", "text/event-stream")
				if lastID != "" {
					req.Header.Set("Last-Event-ID", lastID)
				}
				resp, err := client.Do(req)
				if err != nil {
					return false, false, idleErr(fmt.Errorf("sse: follow %s: %w", url, err))
				}
				defer resp.Body.Close()
				switch {
				case resp.StatusCode == http.StatusNoContent:
					return false, true, nil
				case resp.StatusCode >= 500:
					return false, false, fmt.Errorf("sse: follow %s: server error %s", url, resp.Status)
				case resp.StatusCode != http.StatusOK:
					body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
					return false, true, fmt.Errorf("sse: follow %s: %s: %s", url, resp.Status, body)
				}
				if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
					return false, true, fmt.Errorf("sse: follow %s: response is %q, not text/event-stream", url, resp.Header.Get("Content-Type"))
				}
				var body io.Reader = resp.Body
				if timer != nil {
					timer.Stop()
					body = &idleReader{r: resp.Body, timer: timer, idle: idle}
				}
				for msg, err := range cfg.Reader.Read(body) {
					if err != nil {
						return progressed, false, idleErr(err)
					}
					if msg.ID != lastID {
						if sendableID(msg.ID) {
							lastID = msg.ID
						} else if msg.ID != badID {
							badID = msg.ID
							err := fmt.Errorf("sse: follow %s: ignoring event id %q (%d bytes): it holds a control character or exceeds MaxLastEventIDBytes (%d), so it cannot go back as Last-Event-ID; the server should send ids without them", url, badID[:min(len(badID), 64)], len(badID), MaxLastEventIDBytes)
							if !yield(event.Event{}, err) {
								return progressed, true, errStop
							}
						}
					}
					if msg.Retry > 0 {
						wait = msg.Retry
					}
					ev, err := cfg.Reader.Decoder.Decode([]byte(msg.Data))
					if err != nil {
						if !yield(event.Event{}, fmt.Errorf("sse: message id %q (event %q): %w", msg.ID, msg.Event, err)) {
							return progressed, true, errStop
						}
						continue
					}
					if ev.Seq != 0 && ev.Seq <= floor {
						continue // already yielded before a reconnect
					}
					if ev.Seq != 0 && ev.Seq < lastSeq {
						err := fmt.Errorf("sse: follow %s: event id %d came after id %d, out of order; it follows", url, ev.Seq, lastSeq)
						if !yield(event.Event{}, err) {
							return progressed, true, errStop
						}
					}
					if ev.Seq != 0 {
						lastSeq, maxSeq = ev.Seq, max(maxSeq, ev.Seq)
					}
					progressed = true
					if !yield(ev, nil) {
						return progressed, true, errStop
					}
				}
				return progressed, false, nil // the server closed the stream: ask again
			}()
			if errors.Is(err, errStop) {
				return
			}
			if ended {
				if err != nil {
					yield(event.Event{}, err)
				}
				return
			}
			if ctx.Err() != nil {
				yield(event.Event{}, ctx.Err())
				return
			}
			// A connection that delivered a new event is no failure, however
			// it ended; the others count.
			if progressed {
				failures = 0
			} else if failures++; failures >= maxFailures {
				if err == nil {
					err = errors.New("the server closed the connection without sending anything")
				}
				yield(event.Event{}, fmt.Errorf("sse: follow %s: giving up after %d failed connections in a row: %w", url, failures, err))
				return
			}
			// After a clean end that delivered new events, reconnect at
			// once: the server most likely answers 204 and Follow returns.
			// Only one such reconnect in a row goes without the wait, so a
			// server that ends every connection at once (with or without a
			// new event) gets one request per retry: period, not a loop.
			if err == nil && progressed && !immediate {
				immediate = true
				continue
			}
			immediate = false
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				yield(event.Event{}, ctx.Err())
				return
			case <-t.C:
			}
		}
	}
}

var errStop = errors.New("stop")

// idleReader runs timer while a Read waits for the server, so that the
// connection is dropped when one waits longer than idle; the time the
// consumer spends on the events does not count.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	r.timer.Reset(r.idle)
	n, err := r.r.Read(p)
	r.timer.Stop()
	return n, err
}

// sendableID reports whether id can go back in a Last-Event-ID header: no
// control character but tab, and at most MaxLastEventIDBytes.
func sendableID(id string) bool {
	if len(id) > MaxLastEventIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// followClient returns client (http.DefaultClient if nil), or when header
// has fields a copy of it whose CheckRedirect removes them from a redirect
// to another origin than the first request's, then applies client's own
// CheckRedirect (or the default limit of 10 redirects).
func followClient(client *http.Client, header http.Header) *http.Client {
	if client == nil {
		client = http.DefaultClient
	}
	if len(header) == 0 {
		return client
	}
	c := *client
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !sameOrigin(req.URL, via[0].URL) {
			for k := range header {
				switch http.CanonicalHeaderKey(k) {
				case "Accept", "Last-Event-Id":
				default:
					delete(req.Header, k)
					req.Header.Del(k)
				}
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// sameOrigin reports whether a and b have the same scheme, host and port.
func sameOrigin(a, b *neturl.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// port returns u's port, or its scheme's default.
func port(u *neturl.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
