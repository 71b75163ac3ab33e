package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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

// getCounter hides a Saver's optional interfaces and counts its Get calls.
type getCounter struct {
	checkpoint.Saver
	gets int
}

func (g *getCounter) Get(ctx context.Context, thread, id string) (*checkpoint.Snapshot, error) {
	g.gets++
	return g.Saver.Get(ctx, thread, id)
}

// TestAllSnapshots checks that AllSnapshots gives what List and Get give,
// page by page, with and without SnapshotLister, and that with it no Get is
// made.
func TestAllSnapshots(t *testing.T) {
	ctx := context.Background()
	mem := checkpoint.NewMemory()
	prev := ""
	for i := range 7 {
		cp := &checkpoint.Checkpoint{ThreadID: "t", ParentID: prev, Step: i, Versions: map[string]uint64{"log": uint64(i + 1)},
			Metadata: map[string]string{"even": strconv.FormatBool(i%2 == 0)}}
		blob := checkpoint.Blob{Channel: "log", Kind: checkpoint.Delta, Data: []byte(`["` + strconv.Itoa(i) + `"]`)}
		var writes []checkpoint.Write
		if i == 3 {
			writes = []checkpoint.Write{{TaskID: "x", Channel: "log", Value: []byte(`["w"]`)}}
		}
		if err := mem.Put(ctx, prev, cp, []checkpoint.Blob{blob}, writes); err != nil {
			t.Fatal(err)
		}
		prev = cp.ID
	}
	for _, opts := range []checkpoint.ListOptions{{}, {Limit: 2}, {Limit: 3, Metadata: map[string]string{"even": "true"}}} {
		var want []*checkpoint.Snapshot
		for cp, err := range checkpoint.All(ctx, mem, "t", opts) {
			if err != nil {
				t.Fatal(err)
			}
			snap, err := mem.Get(ctx, "t", cp.ID)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, snap)
		}
		for _, tc := range []struct {
			name     string
			saver    checkpoint.Saver
			wantGets int
		}{
			{"SnapshotLister", mem, 0},
			{"List and Get", &getCounter{Saver: mem}, len(want)},
		} {
			t.Run(fmt.Sprintf("%s limit %d", tc.name, opts.Limit), func(t *testing.T) {
				var got []*checkpoint.Snapshot
				for snap, err := range checkpoint.AllSnapshots(ctx, tc.saver, "t", opts) {
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, snap)
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("snapshots mismatch (-want +got):\n%s", diff)
				}
				if g, ok := tc.saver.(*getCounter); ok && g.gets != tc.wantGets {
					t.Errorf("%d Get calls; want %d", g.gets, tc.wantGets)
				}
			})
		}
	}
	for _, err := range checkpoint.AllSnapshots(ctx, mem, "t", checkpoint.ListOptions{Before: "nope"}) {
		if !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("got %v; want ErrNotFound", err)
		}
	}
}
