package resilience_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/resilience"
	"github.com/google/go-cmp/cmp"
)

// timeoutErr is a net.Error that timed out, as a deadline on a conn gives.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Err: os.NewSyscallError("connect", err)}
}

func TestClassify(t *testing.T) {
	plain := errors.New("something odd")
	tests := []struct {
		name string
		err  error
		want resilience.Class
	}{
		{"nil", nil, resilience.Unknown},
		{"plain error", plain, resilience.Unknown},
		{"marked transient", resilience.MarkTransient(plain), resilience.Transient},
		{"marked permanent", resilience.MarkPermanent(plain), resilience.Permanent},
		{"rate limit", resilience.RateLimit(plain, time.Second), resilience.RateLimited},
		{"mark wrapped by fmt", fmt.Errorf("call tool: %w", resilience.MarkPermanent(plain)), resilience.Permanent},
		{"outermost mark wins", resilience.MarkPermanent(resilience.MarkTransient(plain)), resilience.Permanent},
		{"mark beats the status", resilience.MarkTransient(&resilience.HTTPError{StatusCode: 400}), resilience.Transient},
		{"mark beats cancellation", resilience.MarkTransient(context.Canceled), resilience.Transient},
		{"Mark with any class", resilience.Mark(plain, resilience.Canceled), resilience.Canceled},

		// Context errors.
		{"context canceled", context.Canceled, resilience.Canceled},
		{"canceled inside url.Error", &url.Error{Op: "Get", URL: "http://x", Err: context.Canceled}, resilience.Canceled},
		{"deadline exceeded", context.DeadlineExceeded, resilience.Transient},
		{"deadline inside url.Error", &url.Error{Op: "Get", URL: "http://x", Err: context.DeadlineExceeded}, resilience.Transient},

		// This package's errors.
		{"timeout error", &resilience.TimeoutError{Limit: time.Second, Err: context.Canceled}, resilience.Transient},
		{"bulkhead full", fmt.Errorf("%w: 1 running", resilience.ErrBulkheadFull), resilience.Transient},
		{"circuit open", &resilience.CircuitOpenError{RetryIn: time.Second}, resilience.Transient},
		{"retry error sees through", &resilience.RetryError{Attempts: 3, Err: &resilience.HTTPError{StatusCode: 404}}, resilience.Permanent},

		// HTTP.
		{"HTTP 429", &resilience.HTTPError{StatusCode: 429}, resilience.RateLimited},
		{"HTTP 503", &resilience.HTTPError{StatusCode: 503}, resilience.Transient},
		{"HTTP 401", &resilience.HTTPError{StatusCode: 401}, resilience.Permanent},
		{"HTTP wrapped", fmt.Errorf("openai: %w", &resilience.HTTPError{StatusCode: 502}), resilience.Transient},

		// Network.
		{"connection refused", opErr("dial", syscall.ECONNREFUSED), resilience.Transient},
		{"connection reset", opErr("read", syscall.ECONNRESET), resilience.Transient},
		{"connection aborted", opErr("read", syscall.ECONNABORTED), resilience.Transient},
		{"broken pipe", opErr("write", syscall.EPIPE), resilience.Transient},
		{"host unreachable", opErr("dial", syscall.EHOSTUNREACH), resilience.Transient},
		{"network unreachable", opErr("dial", syscall.ENETUNREACH), resilience.Transient},
		{"bare errno", syscall.ECONNREFUSED, resilience.Transient},
		{"other op error", &net.OpError{Op: "read", Net: "tcp", Err: plain}, resilience.Transient},
		{"net timeout", &net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}, resilience.Transient},
		{"timeout in url.Error", &url.Error{Op: "Post", URL: "http://x", Err: timeoutErr{}}, resilience.Transient},
		{"closed conn", fmt.Errorf("read: %w", net.ErrClosed), resilience.Transient},
		{"EOF", &url.Error{Op: "Get", URL: "http://x", Err: io.EOF}, resilience.Transient},
		{"unexpected EOF", io.ErrUnexpectedEOF, resilience.Transient},
		{"no such host", &net.DNSError{Err: "no such host", Name: "nope.invalid", IsNotFound: true}, resilience.Permanent},
		{"DNS timeout", &net.DNSError{Err: "i/o timeout", Name: "example.com", IsTimeout: true}, resilience.Transient},
		{"DNS server failure", &net.DNSError{Err: "server misbehaving", Name: "example.com", IsTemporary: true}, resilience.Transient},
		{"bad address", &net.AddrError{Err: "missing port in address", Addr: "example.com"}, resilience.Permanent},
		{"unknown authority", &url.Error{Op: "Get", URL: "https://x", Err: x509.UnknownAuthorityError{}}, resilience.Permanent},
		{"hostname mismatch", x509.HostnameError{Host: "x"}, resilience.Permanent},
		{"joined: first match", errors.Join(plain, context.Canceled), resilience.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resilience.Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestClassifyRealNetworkErrors classifies errors produced by real
// connections on this machine, not constructed ones.
func TestClassifyRealNetworkErrors(t *testing.T) {
	// A port nobody listens on: connection refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer slow.Close()
	hangup := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer hangup.Close()
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	tlsSrv.StartTLS()
	defer tlsSrv.Close()

	get := func(client *http.Client, ctx context.Context, u string) error {
		defer client.CloseIdleConnections()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name string
		call func() error
		want resilience.Class
	}{
		{"connection refused", func() error {
			return get(&http.Client{Transport: &http.Transport{}}, context.Background(), "http://"+closedAddr)
		}, resilience.Transient},
		{"client timeout", func() error {
			return get(&http.Client{Transport: &http.Transport{}, Timeout: 20 * time.Millisecond}, context.Background(), slow.URL)
		}, resilience.Transient},
		{"server hung up", func() error {
			return get(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, context.Background(), hangup.URL)
		}, resilience.Transient},
		{"untrusted certificate", func() error {
			return get(&http.Client{Transport: &http.Transport{}}, context.Background(), tlsSrv.URL)
		}, resilience.Permanent},
		{"caller cancelled", func() error {
			return get(&http.Client{Transport: &http.Transport{}}, canceled, slow.URL)
		}, resilience.Canceled},
		{"missing port", func() error {
			_, err := net.Dial("tcp", "127.0.0.1")
			return err
		}, resilience.Permanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil {
				t.Fatal("call succeeded; want an error")
			}
			if got := resilience.Classify(err); got != tt.want {
				t.Errorf("Classify(%v) = %v, want %v", err, got, tt.want)
			}
		})
	}
}

func TestClassifyStatus(t *testing.T) {
	tests := []struct {
		code int
		want resilience.Class
	}{
		{200, resilience.Unknown},
		{204, resilience.Unknown},
		{304, resilience.Unknown},
		{400, resilience.Permanent},
		{401, resilience.Permanent},
		{403, resilience.Permanent},
		{404, resilience.Permanent},
		{408, resilience.Transient},
		{409, resilience.Permanent},
		{413, resilience.Permanent},
		{422, resilience.Permanent},
		{425, resilience.Transient},
		{429, resilience.RateLimited},
		{499, resilience.Permanent},
		{500, resilience.Transient},
		{501, resilience.Permanent},
		{502, resilience.Transient},
		{503, resilience.Transient},
		{504, resilience.Transient},
		{505, resilience.Permanent},
		{507, resilience.Transient},
		{511, resilience.Permanent},
		{529, resilience.Transient},
		{599, resilience.Transient},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.code), func(t *testing.T) {
			if got := resilience.ClassifyStatus(tt.code); got != tt.want {
				t.Errorf("ClassifyStatus(%d) = %v, want %v", tt.code, got, tt.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"120", 120 * time.Second, true},
		{"0", 0, true},
		{" 7 ", 7 * time.Second, true},
		{"99999999999999999", time.Duration(1<<63-1) / time.Second * time.Second, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"", 0, false},
		{"Sun, 22 Nov 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Sunday, 22-Nov-26 12:01:00 GMT", time.Minute, true}, // RFC 850
		{"Sun Nov 22 12:00:05 2026", 5 * time.Second, true},   // ANSI C asctime
		{"Sun, 22 Nov 2026 11:00:00 GMT", 0, true},            // in the past
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			got, ok := resilience.ParseRetryAfter(tt.value, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.value, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestCheckResponse(t *testing.T) {
	date := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
		case "/limited":
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/unavailable":
			// An HTTP-date 90 s after the response's own Date: the delay is
			// measured from Date, whatever this machine's clock says.
			w.Header().Set("Date", date.Format(http.TimeFormat))
			w.Header().Set("Retry-After", date.Add(90*time.Second).Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/bad-header":
			w.Header().Set("Retry-After", "later")
			w.WriteHeader(http.StatusBadGateway)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	type result struct {
		Err        string
		Class      resilience.Class
		RetryAfter time.Duration
		HasHint    bool
	}
	tests := []struct {
		path string
		want result
	}{
		{"/ok", result{}},
		{"/limited", result{"resilience: HTTP 429 Too Many Requests (retry after 3s)", resilience.RateLimited, 3 * time.Second, true}},
		{"/unavailable", result{"resilience: HTTP 503 Service Unavailable (retry after 1m30s)", resilience.Transient, 90 * time.Second, true}},
		{"/bad-header", result{"resilience: HTTP 502 Bad Gateway", resilience.Transient, 0, false}},
		{"/missing", result{"resilience: HTTP 404 Not Found", resilience.Permanent, 0, false}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, err := client.Get(srv.URL + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			err = resilience.CheckResponse(resp)
			var got result
			if err != nil {
				got.Err = err.Error()
				got.Class = resilience.Classify(err)
				got.RetryAfter, got.HasHint = resilience.RetryAfter(err)
				var httpErr *resilience.HTTPError
				if !errors.As(err, &httpErr) || httpErr.StatusCode != resp.StatusCode {
					t.Errorf("CheckResponse = %#v; want an *HTTPError with status %d", err, resp.StatusCode)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckResponse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHTTPErrorWithoutStatusText(t *testing.T) {
	err := &resilience.HTTPError{StatusCode: 529}
	if got, want := err.Error(), "resilience: HTTP 529"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestRetryAfter(t *testing.T) {
	plain := errors.New("x")
	tests := []struct {
		name   string
		err    error
		want   time.Duration
		wantOK bool
	}{
		{"nil", nil, 0, false},
		{"plain", plain, 0, false},
		{"rate limit", resilience.RateLimit(plain, 2*time.Second), 2 * time.Second, true},
		{"rate limit without hint", resilience.RateLimit(plain, 0), 0, false},
		{"negative hint", resilience.RateLimit(plain, -time.Second), 0, false},
		{"wrapped", fmt.Errorf("llm: %w", resilience.RateLimit(plain, time.Second)), time.Second, true},
		{"mark over HTTP error", resilience.MarkTransient(&resilience.HTTPError{StatusCode: 503, RetryAfter: 5 * time.Second}), 5 * time.Second, true},
		{"circuit open", &resilience.CircuitOpenError{RetryIn: 7 * time.Second}, 7 * time.Second, true},
		{"joined", errors.Join(plain, resilience.RateLimit(plain, time.Minute)), time.Minute, true},
		{"retry error", &resilience.RetryError{Attempts: 2, Err: resilience.RateLimit(plain, time.Second)}, time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := resilience.RetryAfter(tt.err)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("RetryAfter(%v) = %v, %v; want %v, %v", tt.err, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestMarkKeepsErrorIdentity(t *testing.T) {
	base := errors.New("tool failed")
	for _, marked := range []error{
		resilience.MarkTransient(base),
		resilience.MarkPermanent(base),
		resilience.RateLimit(base, time.Second),
		resilience.Mark(base, resilience.Transient),
	} {
		if !errors.Is(marked, base) {
			t.Errorf("errors.Is(%#v, base) = false", marked)
		}
		if marked.Error() != base.Error() {
			t.Errorf("marked message %q, want %q", marked.Error(), base.Error())
		}
	}
	for _, marked := range []error{
		resilience.MarkTransient(nil),
		resilience.MarkPermanent(nil),
		resilience.RateLimit(nil, time.Second),
		resilience.Mark(nil, resilience.Permanent),
	} {
		if marked != nil {
			t.Errorf("marking nil gave %#v, want nil", marked)
		}
	}
}

func TestClassString(t *testing.T) {
	got := []string{}
	for c := resilience.Unknown; c <= resilience.Canceled+1; c++ {
		got = append(got, c.String())
	}
	want := []string{"unknown", "transient", "rate-limited", "permanent", "canceled", "Class(5)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Class.String mismatch (-want +got):\n%s", diff)
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&resilience.CircuitOpenError{Name: "mcp:github", RetryIn: 1500 * time.Millisecond}, `resilience: circuit breaker "mcp:github" open; next trial call in 1.5s`},
		{&resilience.CircuitOpenError{}, "resilience: circuit breaker open; trial call in progress"},
		{&resilience.TimeoutError{Limit: 2 * time.Minute}, "resilience: attempt timed out after 2m0s"},
		{&resilience.TimeoutError{Limit: time.Second, Err: context.Canceled}, "resilience: attempt timed out after 1s: context canceled"},
		{&resilience.RetryError{Attempts: 3, Err: io.EOF}, "resilience: gave up after 3 attempts: EOF"},
		{&resilience.ConfigError{Field: "Timeout", Problem: "bad"}, "resilience: Config.Timeout: bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	te := &resilience.TimeoutError{Limit: time.Second}
	if !errors.Is(te, resilience.ErrTimeout) || !errors.Is(te, context.DeadlineExceeded) || !te.Timeout() {
		t.Error("TimeoutError must match ErrTimeout and context.DeadlineExceeded and report Timeout()")
	}
	var netErr net.Error
	if !errors.As(error(te), &netErr) {
		t.Error("TimeoutError is not a net.Error")
	}
}
