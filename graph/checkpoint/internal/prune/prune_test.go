package prune_test

import (
	"errors"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/prune"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestRun runs the idle step with the cut-off MaxIdle before Now, then
// KeepLatest for each long thread, and sums what they deleted.
func TestRun(t *testing.T) {
	var calls []string
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	core, logs := observer.New(zap.InfoLevel)
	got, err := prune.Run(checkpoint.Retention{MaxIdle: time.Hour, KeepLatest: 2, Now: now}, zap.New(core), prune.Steps{
		Idle: func(before time.Time) (checkpoint.Pruned, error) {
			if !before.Equal(now.Add(-time.Hour)) {
				t.Errorf("Idle(%v), want an hour before %v", before, now)
			}
			calls = append(calls, "idle")
			return checkpoint.Pruned{Threads: 1, Checkpoints: 3, Blobs: 4}, nil
		},
		Long: func() ([]string, error) { calls = append(calls, "long"); return []string{"a", "b"}, nil },
		KeepLatest: func(id string) (checkpoint.Pruned, error) {
			calls = append(calls, id)
			return checkpoint.Pruned{Checkpoints: 1, Blobs: 2}, nil
		},
	})
	want := checkpoint.Pruned{Threads: 1, Checkpoints: 5, Blobs: 8}
	if err != nil || got != want {
		t.Errorf("Run = %+v, %v; want %+v", got, err, want)
	}
	if s := calls; len(s) != 4 || s[0] != "idle" || s[1] != "long" || s[2] != "a" || s[3] != "b" {
		t.Errorf("steps %v, want [idle long a b]", s)
	}
	if logs.FilterMessage("pruned idle threads").Len() != 1 {
		t.Errorf("logged %v, want one line for the idle threads", logs.All())
	}
}

// TestRunErrors returns nothing for a failed idle step (its transaction
// deleted nothing), what came before a failed KeepLatest, and refuses a
// negative retention without calling a step.
func TestRunErrors(t *testing.T) {
	boom := errors.New("boom")
	got, err := prune.Run(checkpoint.Retention{MaxIdle: time.Hour}, zap.NewNop(), prune.Steps{
		Idle: func(time.Time) (checkpoint.Pruned, error) { return checkpoint.Pruned{Threads: 2}, boom },
	})
	if !errors.Is(err, boom) || got != (checkpoint.Pruned{}) {
		t.Errorf("Run with a failed Idle = %+v, %v; want nothing, boom", got, err)
	}
	got, err = prune.Run(checkpoint.Retention{KeepLatest: 1}, zap.NewNop(), prune.Steps{
		Long: func() ([]string, error) { return []string{"a", "b"}, nil },
		KeepLatest: func(id string) (checkpoint.Pruned, error) {
			if id == "b" {
				return checkpoint.Pruned{}, boom
			}
			return checkpoint.Pruned{Checkpoints: 1}, nil
		},
	})
	if !errors.Is(err, boom) || got != (checkpoint.Pruned{Checkpoints: 1}) {
		t.Errorf("Run with a failed KeepLatest = %+v, %v; want the first thread's, boom", got, err)
	}
	if _, err := prune.Run(checkpoint.Retention{KeepLatest: -1}, zap.NewNop(), prune.Steps{}); !errors.Is(err, checkpoint.ErrInvalid) {
		t.Errorf("Run of a negative KeepLatest: %v, want ErrInvalid", err)
	}
}
