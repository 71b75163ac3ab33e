package checkpoint_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

func TestAll(t *testing.T) {
	ctx := context.Background()
	s := checkpoint.NewMemory()
	var want []int // steps, newest first
	prev := ""
	for i := range 7 {
		cp := &checkpoint.Checkpoint{ThreadID: "t", ParentID: prev, Step: i, Versions: map[string]uint64{"n": uint64(i + 1)}}
		if err := s.Put(ctx, prev, cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte("1")}}, nil); err != nil {
			t.Fatal(err)
		}
		prev = cp.ID
		want = append([]int{i}, want...)
	}
	tests := []struct {
		name  string
		limit int
		stop  int // stop after this many; 0 reads all
		want  []int
	}{
		{"one page", 0, 0, want},
		{"pages of 3", 3, 0, want},
		{"pages of 7", 7, 0, want},
		{"pages of 1", 1, 0, want},
		{"stop early", 2, 3, want[:3]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for cp, err := range checkpoint.All(ctx, s, "t", checkpoint.ListOptions{Limit: tc.limit}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, cp.Step)
				if len(got) == tc.stop {
					break
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("steps mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for _, err := range checkpoint.All(ctx, s, "t", checkpoint.ListOptions{Before: "nope"}) {
		if !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("got %v; want ErrNotFound", err)
		}
	}
}
