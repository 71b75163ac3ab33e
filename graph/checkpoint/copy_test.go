package checkpoint_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// CopyThread gives the new thread the same checkpoints (ids, parents,
// order, channel values with their deltas, pending writes), forks
// included, and the source thread is left as it was.
// Through coreOnly, it takes its generic path (Get and Put).
func TestCopyThread(t *testing.T) {
	ctx := t.Context()
	s := checkpoint.NewMemory()
	put := func(expect string, cp checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) string {
		t.Helper()
		cp.ThreadID = "src"
		if err := s.Put(ctx, expect, &cp, blobs, writes); err != nil {
			t.Fatal(err)
		}
		return cp.ID
	}
	a := put("", checkpoint.Checkpoint{Step: -1, Versions: map[string]uint64{"msgs": 1, "n": 1}, Metadata: map[string]string{"source": "input"}},
		[]checkpoint.Blob{{Channel: "msgs", Kind: checkpoint.Delta, Data: []byte(`["hi"]`)}, {Channel: "n", Kind: checkpoint.Full, Data: []byte(`1`)}}, nil)
	b := put(a, checkpoint.Checkpoint{ParentID: a, Step: 0, Versions: map[string]uint64{"msgs": 2, "n": 1}},
		[]checkpoint.Blob{{Channel: "msgs", Kind: checkpoint.Delta, Data: []byte(`["yo"]`)}},
		[]checkpoint.Write{{TaskID: "t1", Node: "x", Channel: "n", Value: []byte(`2`)}})
	c := put(b, checkpoint.Checkpoint{ParentID: a, Step: 0, Versions: map[string]uint64{"msgs": 3, "n": 3}}, // a fork from a
		[]checkpoint.Blob{{Channel: "msgs", Kind: checkpoint.Delta, Data: []byte(`["other"]`)}, {Channel: "n", Kind: checkpoint.Full, Data: []byte(`5`)}}, nil)
	n, err := checkpoint.CopyThread(ctx, coreOnly{s}, "src", "dst")
	if err != nil || n != 3 {
		t.Fatalf("CopyThread: %d, %v; want 3 checkpoints", n, err)
	}
	for _, id := range []string{a, b, c} {
		want, err := s.Get(ctx, "src", id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "dst", id)
		if err != nil {
			t.Fatalf("copy of %s: %v", id, err)
		}
		want.ThreadID = "dst"
		if !reflect.DeepEqual(got, want) {
			t.Errorf("copy of %s:\n got %+v\nwant %+v", id, got, want)
		}
	}
	srcList, _ := s.List(ctx, "src", checkpoint.ListOptions{})
	dstList, _ := s.List(ctx, "dst", checkpoint.ListOptions{})
	if len(srcList) != 3 || len(dstList) != 3 || dstList[0].ID != srcList[0].ID || dstList[2].ID != srcList[2].ID {
		t.Fatalf("history order: src %v, dst %v", srcList, dstList)
	}
	if _, err := checkpoint.CopyThread(ctx, coreOnly{s}, "src", "src"); !errors.Is(err, checkpoint.ErrInvalid) {
		t.Fatalf("copy onto itself: %v; want ErrInvalid", err)
	}
	// Pruned to its latest checkpoint, whose messages are a chain of
	// deltas, the thread cannot be copied through Get and Put; the error
	// says why. A Copier (Memory) copies it as stored.
	if _, err := checkpoint.Prune(ctx, s, checkpoint.Retention{ThreadID: "src", KeepLatest: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := checkpoint.CopyThread(ctx, coreOnly{s}, "src", "dst2"); !errors.Is(err, checkpoint.ErrInvalid) {
		t.Fatalf("copy of a pruned delta chain: %v; want ErrInvalid", err)
	}
	if n, err := checkpoint.CopyThread(ctx, s, "src", "dst3"); err != nil || n != 1 {
		t.Fatalf("copy of a pruned delta chain by a Copier: %d, %v; want 1, nil", n, err)
	}
}
