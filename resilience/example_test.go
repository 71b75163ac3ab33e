package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentgraph/agentgraph/resilience"
)

// A Policy around an HTTP call: the server is unavailable twice, then
// answers. CheckResponse turns the 503s into errors the retry recognises.
func Example() {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= 2 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	cfg := resilience.MCP()                     // 3 attempts, breaker after 5 failures
	cfg.Name = "greeter"                        // appears in logs and breaker errors
	cfg.Retry.BaseDelay = 10 * time.Millisecond // short for the example; the preset waits 1s
	cfg.Timeout = 5 * time.Second               // per attempt
	policy, err := resilience.New[string](cfg, resilience.WithObserver(func(a resilience.Attempt) {
		if a.Err != nil {
			fmt.Printf("attempt %d: %v (%v, retry: %v)\n", a.Number, a.Err, a.Class, a.Retry)
		}
	}))
	if err != nil {
		panic(err)
	}

	body, err := policy.Do(context.Background(), func(ctx context.Context) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err != nil {
			return "", resilience.MarkPermanent(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err // network errors classify themselves
		}
		defer resp.Body.Close()
		if err := resilience.CheckResponse(resp); err != nil {
			return "", err
		}
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	})
	fmt.Println(body, err)
	// Output:
	// attempt 1: resilience: HTTP 503 Service Unavailable (transient, retry: true)
	// attempt 2: resilience: HTTP 503 Service Unavailable (transient, retry: true)
	// hello <nil>
}

func ExampleClassify() {
	for _, err := range []error{
		&resilience.HTTPError{StatusCode: http.StatusTooManyRequests},
		&resilience.HTTPError{StatusCode: http.StatusBadGateway},
		&resilience.HTTPError{StatusCode: http.StatusUnauthorized},
		fmt.Errorf("dial: %w", syscall.ECONNREFUSED),
		context.Canceled,
		resilience.MarkPermanent(errors.New("tool: unknown argument \"q\"")),
		errors.New("something else"),
	} {
		fmt.Printf("%-14v %v\n", resilience.Classify(err), err)
	}
	// Output:
	// rate-limited   resilience: HTTP 429 Too Many Requests
	// transient      resilience: HTTP 502 Bad Gateway
	// permanent      resilience: HTTP 401 Unauthorized
	// transient      dial: connection refused
	// canceled       context canceled
	// permanent      tool: unknown argument "q"
	// unknown        something else
}

// A client library reports a rate limit in its own error type; RateLimit
// marks it so that the retry waits as long as the provider asked.
func ExampleRateLimit() {
	providerErr := errors.New("provider: rate limit reached, try again in 20s")
	err := resilience.RateLimit(providerErr, 20*time.Second)

	d, ok := resilience.RetryAfter(err)
	fmt.Println(resilience.Classify(err), d, ok)
	fmt.Println(err) // the message is unchanged
	// Output:
	// rate-limited 20s true
	// provider: rate limit reached, try again in 20s
}

// A fallback answers when the dependency cannot: here from a cache, when the
// breaker has opened.
func ExampleWithFallback() {
	cfg := resilience.Config{Breaker: resilience.BreakerConfig{FailureThreshold: 1, RecoveryTime: time.Minute}}
	policy, err := resilience.New[string](cfg, resilience.WithFallback(func(ctx context.Context, err error) (string, error) {
		if errors.Is(err, resilience.ErrCircuitOpen) {
			return "cached forecast", nil
		}
		return "", err
	}))
	if err != nil {
		panic(err)
	}
	down := func(context.Context) (string, error) {
		return "", resilience.MarkTransient(errors.New("weather service unavailable"))
	}
	for range 2 {
		forecast, err := policy.Do(context.Background(), down)
		fmt.Printf("%q %v\n", forecast, err)
	}
	// Output:
	// "" weather service unavailable
	// "cached forecast" <nil>
}

// Breaker and Bulkhead report state for health endpoints.
func ExamplePolicy_Breaker() {
	cfg := resilience.LLM()
	cfg.Breaker.OnStateChange = func(from, to resilience.BreakerState) {
		fmt.Printf("breaker: %v → %v\n", from, to)
	}
	cfg.Retry.MaxAttempts = 1
	policy, err := resilience.New[string](cfg)
	if err != nil {
		panic(err)
	}
	for range 3 {
		policy.Do(context.Background(), func(context.Context) (string, error) {
			return "", &resilience.HTTPError{StatusCode: http.StatusInternalServerError}
		})
	}
	st := policy.Breaker()
	fmt.Println(st.State, st.Failures, st.RetryIn > 59*time.Second)
	// Output:
	// breaker: closed → open
	// open 3 true
}

func ExampleParseRetryAfter() {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"120", "Sun, 22 Nov 2026 12:00:30 GMT", "later"} {
		d, ok := resilience.ParseRetryAfter(v, now)
		fmt.Println(d, ok)
	}
	// Output:
	// 2m0s true
	// 30s true
	// 0s false
}
