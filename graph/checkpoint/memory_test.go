package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/checkpointtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemory(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return checkpoint.NewMemory() })
}

func TestMemoryZeroValue(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return new(checkpoint.Memory) })
}

// TestMemoryFindsAnyID checks lookups on threads whose checkpoint IDs come
// from NewID (ascending) and from the caller in any order.
func TestMemoryFindsAnyID(t *testing.T) {
	tests := []struct {
		name string
		id   func(i int) string
	}{
		{"assigned", func(int) string { return "" }},
		{"descending", func(i int) string { return fmt.Sprintf("cp-%03d", 100-i) }},
		{"mixed", func(i int) string {
			if i%3 == 0 {
				return ""
			}
			return fmt.Sprintf("x-%03d", (i*37)%100)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := checkpoint.NewMemory()
			var ids []string
			prev := ""
			for i := range 20 {
				cp := &checkpoint.Checkpoint{ThreadID: "t", ID: tc.id(i), ParentID: prev, Step: i, Versions: map[string]uint64{"n": uint64(i + 1)}}
				if err := s.Put(ctx, prev, cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte(strconv.Itoa(i))}}, nil); err != nil {
					t.Fatalf("Put %d: %v", i, err)
				}
				ids = append(ids, cp.ID)
				prev = cp.ID
			}
			for i, id := range ids {
				snap, err := s.Get(ctx, "t", id)
				if err != nil {
					t.Fatalf("Get(%q): %v", id, err)
				}
				if snap.Step != i {
					t.Errorf("Get(%q).Step = %d; want %d", id, snap.Step, i)
				}
				page, err := s.List(ctx, "t", checkpoint.ListOptions{Before: id, Limit: 1})
				if err != nil {
					t.Fatalf("List before %q: %v", id, err)
				}
				if i > 0 && (len(page) != 1 || page[0].ID != ids[i-1]) {
					t.Errorf("List before %q = %v; want %s", id, page, ids[i-1])
				}
			}
			if _, err := s.Get(ctx, "t", "missing"); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Errorf("Get(missing): %v; want ErrNotFound", err)
			}
		})
	}
}

var _ checkpointtest.Corrupter = (*checkpoint.Memory)(nil)
