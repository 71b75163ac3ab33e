package agent_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/resilience"
)

// fastPolicy retries quickly so that only a Retry-After hint makes a test wait.
func fastPolicy() *resilience.Config {
	return &resilience.Config{
		Retry:   resilience.RetryConfig{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Second},
		Timeout: 100 * time.Millisecond,
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	const wait = 60 * time.Millisecond
	m := llmtest.New(llmtest.RateLimited(wait), llmtest.Text("ok"))
	c := newClient(t, agent.Config{Model: m, Resilience: fastPolicy()})
	start := time.Now()
	resp, err := agent.Complete(context.Background(), c, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < wait {
		t.Errorf("retried after %v, before the Retry-After of %v", elapsed, wait)
	}
	if resp.Text != "ok" || len(m.Calls()) != 2 {
		t.Errorf("text %q after %d calls, want ok after 2", resp.Text, len(m.Calls()))
	}
}

func TestRetryByErrorClass(t *testing.T) {
	badRequest := llmtest.Fail(&agent.ProviderError{StatusCode: http.StatusBadRequest, Err: errors.New("invalid model")})
	tests := []struct {
		name      string
		first     llmtest.Reply
		wantCalls int
		wantErr   bool
	}{
		{"transient 503 is retried", llmtest.Transient(), 2, false},
		{"connection timeout is retried", llmtest.Timeout(), 2, false},
		{"hung attempt times out and is retried", llmtest.Hang(), 2, false},
		{"rate limit without hint is retried", llmtest.RateLimited(0), 2, false},
		{"400 is not retried", badRequest, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := llmtest.New(tt.first, llmtest.Text("ok"))
			c := newClient(t, agent.Config{Model: m, Resilience: fastPolicy()})
			_, err := agent.Complete(context.Background(), c, "hi")
			if (err != nil) != tt.wantErr || len(m.Calls()) != tt.wantCalls {
				t.Errorf("err = %v after %d calls; want error %v after %d", err, len(m.Calls()), tt.wantErr, tt.wantCalls)
			}
			var pe *agent.ProviderError
			if tt.wantErr && (!errors.As(err, &pe) || pe.StatusCode != http.StatusBadRequest || pe.Model == "") {
				t.Errorf("err = %#v, want a *ProviderError with status and model", err)
			}
		})
	}
}

func TestRetryGivesUp(t *testing.T) {
	m := llmtest.New().Default(llmtest.Transient())
	c := newClient(t, agent.Config{Model: m, Resilience: fastPolicy()})
	_, err := agent.Complete(context.Background(), c, "hi")
	var pe *agent.ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != http.StatusServiceUnavailable || len(m.Calls()) != 3 {
		t.Errorf("err = %v after %d calls; want the 503 after 3", err, len(m.Calls()))
	}
}

func TestCallerCancellationStops(t *testing.T) {
	m := llmtest.New().Default(llmtest.Hang())
	policy := fastPolicy()
	policy.Timeout = time.Minute // only the caller's cancellation ends the attempt
	c := newClient(t, agent.Config{Model: m, Resilience: policy})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once the model holds the call, however slow the machine.
	go func() {
		for len(m.Calls()) == 0 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := agent.Complete(ctx, c, "hi")
	if !errors.Is(err, context.Canceled) || len(m.Calls()) != 1 {
		t.Errorf("err = %v after %d calls; want context.Canceled after 1", err, len(m.Calls()))
	}
}

func TestInvalidResilienceConfig(t *testing.T) {
	_, err := agent.New(agent.Config{Resilience: &resilience.Config{Retry: resilience.RetryConfig{MaxAttempts: -1}}})
	if err == nil {
		t.Fatal("New accepted an invalid resilience config")
	}
}
