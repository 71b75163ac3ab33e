package graph

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestRetryPolicyWait(t *testing.T) {
	tests := []struct {
		name   string
		policy RetryPolicy
		want   []time.Duration // waits before retries 1, 2, 3, ...
	}{
		{"defaults", RetryPolicy{}, []time.Duration{500 * ms, 1000 * ms, 2000 * ms}},
		{"backoff and cap", RetryPolicy{InitialInterval: 10 * ms, BackoffFactor: 3, MaxInterval: 50 * ms},
			[]time.Duration{10 * ms, 30 * ms, 50 * ms, 50 * ms}},
		{"constant", RetryPolicy{InitialInterval: 7 * ms, BackoffFactor: 1}, []time.Duration{7 * ms, 7 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, want := range tt.want {
				if got := tt.policy.wait(i + 1); got != want {
					t.Errorf("wait(%d) = %v, want %v", i+1, got, want)
				}
			}
		})
	}
	j := RetryPolicy{InitialInterval: 100 * ms, Jitter: true}
	for range 100 {
		if w := j.wait(1); w < 50*ms || w > 100*ms {
			t.Fatalf("jittered wait %v outside [50ms, 100ms]", w)
		}
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	var none *RetryPolicy
	if none.attempts() != 1 || (&RetryPolicy{}).attempts() != 3 || (&RetryPolicy{MaxAttempts: 5}).attempts() != 5 {
		t.Error("attempts defaults are wrong")
	}
	p := &RetryPolicy{}
	tests := []struct {
		err  error
		want bool
	}{
		{errors.New("io"), true},
		{fmt.Errorf("wrapped: %w", &TimeoutError{Timeout: ms}), true},
		{&PanicError{Value: "x"}, false},
		{context.Canceled, false},
		{fmt.Errorf("call: %w", context.DeadlineExceeded), false},
	}
	for _, tt := range tests {
		if got := p.retryable(tt.err); got != tt.want {
			t.Errorf("retryable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

const ms = time.Millisecond
