package sse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"time"

	"github.com/agentgraph/agentgraph/event"
)

// FollowConfig configures [Follow]. The zero value is usable.
type FollowConfig struct {
	// Client sends the requests. Nil means http.DefaultClient. Its Timeout,
	// if any, bounds a whole connection, so leave it zero for long streams.
	Client *http.Client
	// Header is added to every request (authentication, for example).
	Header http.Header
	// Retry is the wait before reconnecting after a failed connection when
	// the server has not set one with a retry: field. Zero means 1s.
	Retry time.Duration
	// MaxFailures is how many connections in a row may fail (a network
	// error, a 5xx status, or a connection that breaks before delivering a
	// new event) before Follow gives up. Zero means 5.
	MaxFailures int
	// Reader bounds the size of lines and messages.
	Reader Reader
}

// Follow reads the events of the SSE stream at url (a GET endpoint served by
// [Stream]) the way a browser's EventSource does: when the connection ends
// or breaks it reconnects with a Last-Event-ID header and continues after
// the last event it received, skipping the events the new connection sends
// again (those with a Seq at most the largest one yielded before it). An
// event whose Seq is below the one before it within one connection is
// yielded after an error saying so; one with the same Seq (a notice about
// the event before it) is yielded as it is. It
// ends when the server answers 204 No Content (the stream is over and
// everything was read) or with an error: ctx's, a 4xx status, a response
// that is not text/event-stream, or MaxFailures failed connections in a
// row. A message that does not decode is yielded as an error and reading
// goes on.
func Follow(ctx context.Context, url string, cfg FollowConfig) iter.Seq2[event.Event, error] {
	client := cfg.Client
	if client == nil {
		client = http.DefaultClient
	}
	wait := cfg.Retry
	if wait <= 0 {
		wait = time.Second
	}
	maxFailures := cfg.MaxFailures
	if maxFailures <= 0 {
		maxFailures = 5
	}
	return func(yield func(event.Event, error) bool) {
		var (
			lastID   string
			maxSeq   uint64 // the largest Seq yielded
			failures int
		)
		for {
			if err := ctx.Err(); err != nil {
				yield(event.Event{}, err)
				return
			}
			progressed, ended, err := func() (progressed, ended bool, err error) {
				floor := maxSeq    // the events up to it were yielded before
				var lastSeq uint64 // the Seq of the event before, on this connection
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
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
					return false, false, fmt.Errorf("sse: follow %s: %w", url, err)
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
				for msg, err := range cfg.Reader.Read(resp.Body) {
					if err != nil {
						return progressed, false, err
					}
					lastID = msg.ID
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
			if progressed {
				failures = 0
			}
			if err == nil && progressed {
				continue // a clean end of a connection: reconnect at once
			}
			if failures++; failures >= maxFailures {
				if err == nil {
					err = errors.New("the server closed the connection without sending anything")
				}
				yield(event.Event{}, fmt.Errorf("sse: follow %s: giving up after %d failed connections in a row: %w", url, failures, err))
				return
			}
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
