package agent

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestRetryAfterOf(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"milliseconds win", map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, 250 * time.Millisecond},
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": now.Add(3 * time.Second).Format(http.TimeFormat)}, 3 * time.Second},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"none", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := retryAfterOf(h, now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProviderErrorFromMessage(t *testing.T) {
	spec := ModelSpec{Provider: "openai", ID: "gpt-test"}
	err := providerError(context.Background(), spec, nil, errors.New("API returned unexpected status code: 503: overloaded"))
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != 503 || pe.Model != "gpt-test" {
		t.Errorf("err = %#v, want status 503 read from the message", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := providerError(ctx, spec, nil, context.Canceled); err != context.Canceled {
		t.Errorf("the caller's cancellation should pass through, got %v", err)
	}
}
