package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
)

// DefaultMaxReplyBytes is the reply cap of a configuration whose
// MaxReplyBytes is zero: 16 MiB, far above any real reply (a model's
// longest answers are well under 1 MiB of text), low enough that a hostile
// or broken server cannot make a call hold gigabytes.
const DefaultMaxReplyBytes = 16 << 20

// ErrReplyTooLarge is the error (wrapped, with the cap and the option to
// raise) of a call whose reply was longer than its configuration's
// MaxReplyBytes.
var ErrReplyTooLarge = errors.New("reply too large")

// replyCap returns the cap of a configuration's MaxReplyBytes value, or an
// error naming the field when it is negative.
func replyCap(n int64, field string) (int64, error) {
	if n < 0 {
		return 0, fmt.Errorf("provider: %s is %d: set it to 0 for the default (%d bytes) or to a positive number of bytes", field, n, DefaultMaxReplyBytes)
	}
	return cmp.Or(n, DefaultMaxReplyBytes), nil
}

// lineMax returns the longest line a stream reader accepts under the reply
// cap limit: one byte over it (so a line at the cap is read and one over it
// is the cap's error), at most math.MaxInt32 so that it fits an int on
// every platform.
func lineMax(limit int64) int {
	return int(min(limit, math.MaxInt32-1)) + 1
}

// capBody is a response body that fails with ErrReplyTooLarge once more
// than limit bytes have been read.
type capBody struct {
	body  io.ReadCloser
	left  int64
	limit int64
	field string    // the configuration field, as in "OpenAIConfig.MaxReplyBytes"
	state *capState // of the call, or nil
}

func newCapBody(body io.ReadCloser, limit int64, field string, state *capState) *capBody {
	return &capBody{body: body, left: limit, limit: limit, field: field, state: state}
}

func (b *capBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.left <= 0 {
		// At the cap: the reply is within it only if it ends here.
		var one [1]byte
		n, err := b.body.Read(one[:])
		if n > 0 {
			err := fmt.Errorf("%w: the reply is over %d bytes: raise %s", ErrReplyTooLarge, b.limit, b.field)
			b.state.set(err)
			return 0, err
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *capBody) Close() error { return b.body.Close() }

// capTransport caps the body of every response it returns. Only a
// successful (2xx) reply records its cap error in the call's capState: the
// body of a failed one is read in part for its message, and its status
// error (a 429 or 503 a resilience policy retries) must stay the call's.
type capTransport struct {
	base  http.RoundTripper
	limit int64
	field string
}

func (t capTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	var state *capState
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		state = capStateOf(r.Context())
	}
	resp.Body = newCapBody(resp.Body, t.limit, t.field, state)
	return resp, nil
}

// capClient returns a copy of base (an empty client when nil) whose
// transport caps every response body at limit bytes.
func capClient(base *http.Client, limit int64, field string) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base //nolint:govet // copying the exported configuration is intended
	}
	c.Transport = capTransport{base: cmp.Or[http.RoundTripper](c.Transport, http.DefaultTransport), limit: limit, field: field}
	return c
}

// capState records, for one call, that a reply went over its cap. A
// client may read a reply cut at the cap as a broken one ("unexpected end
// of JSON input") and drop the reader's error; the call's error is then the
// cap's, from here.
type capState struct {
	mu  sync.Mutex
	err error
}

type capStateKey struct{}

// withCapState returns ctx carrying a new capState for one call.
func withCapState(ctx context.Context) (context.Context, *capState) {
	st := &capState{}
	return context.WithValue(ctx, capStateKey{}, st), st
}

// capStateOf returns the capState of ctx, or nil.
func capStateOf(ctx context.Context) *capState {
	st, _ := ctx.Value(capStateKey{}).(*capState)
	return st
}

func (s *capState) set(err error) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// capErr returns the cap error of the call of ctx, or nil.
func capErr(ctx context.Context) error {
	s := capStateOf(ctx)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
