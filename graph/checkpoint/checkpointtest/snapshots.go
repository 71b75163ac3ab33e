package checkpointtest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// testListSnapshots checks, for a Saver that implements
// checkpoint.SnapshotLister, that ListSnapshots returns exactly what List
// selects and Get returns for each checkpoint, across forks, delta chains
// cut by whole values, shared blobs, pending writes, pagination and a
// metadata filter, and that it keeps threads apart.
func testListSnapshots(t *testing.T, s checkpoint.Saver) {
	sl, ok := s.(checkpoint.SnapshotLister)
	if !ok {
		t.Skip("the Saver does not implement checkpoint.SnapshotLister")
	}
	ctx := context.Background()
	// put saves a checkpoint of thread on parent appending msg to the
	// "messages" channel (whole when full), bumping "turn" and, on the first
	// checkpoint, writing "profile" once.
	put := func(thread, expect, parent string, step int, branch, msg string, full bool, all []string, writes ...checkpoint.Write) string {
		t.Helper()
		cp := &checkpoint.Checkpoint{
			ThreadID: thread, ParentID: parent, Step: step,
			Versions: map[string]uint64{"messages": uint64(step + 1), "turn": uint64(step + 1), "profile": 1},
			Metadata: map[string]string{"branch": branch, "step": fmt.Sprint(step)},
		}
		msgs := checkpoint.Blob{Channel: "messages", Kind: checkpoint.Delta, Data: enc(t, []string{msg})}
		if full {
			msgs = checkpoint.Blob{Channel: "messages", Kind: checkpoint.Full, Data: enc(t, all)}
		}
		blobs := []checkpoint.Blob{msgs, {Channel: "turn", Kind: checkpoint.Full, Data: enc(t, step)}}
		if parent == "" {
			blobs = append(blobs, checkpoint.Blob{Channel: "profile", Kind: checkpoint.Full, Data: []byte(`{"name":"` + thread + `"}`)})
		}
		if err := s.Put(ctx, expect, cp, blobs, writes); err != nil {
			t.Fatalf("Put(%s step %d): %v", thread, step, err)
		}
		return cp.ID
	}
	// Thread "t": main c0..c5 with a whole value at c3, a fork f1, f2 from
	// c1, pending writes given with Put and later with PutWrites.
	c0 := put("t", "", "", 0, "main", "a", false, nil)
	c1 := put("t", c0, c0, 1, "main", "b", false, nil, checkpoint.Write{TaskID: "x", Node: "n", Channel: "messages", Value: enc(t, []string{"w1"})})
	c2 := put("t", c1, c1, 2, "main", "c", false, nil)
	c3 := put("t", c2, c2, 3, "main", "d", true, []string{"a", "b", "c", "d"})
	c4 := put("t", c3, c3, 4, "main", "e", false, nil)
	f1 := put("t", c4, c1, 2, "fork", "C", false, nil)
	f2 := put("t", f1, f1, 3, "fork", "D", false, nil)
	c5 := put("t", f2, c4, 5, "main", "f", false, nil)
	for _, w := range []struct {
		id     string
		writes []checkpoint.Write
	}{
		{c4, []checkpoint.Write{{TaskID: "y", Node: "tools", Channel: "messages", Value: enc(t, []string{"w2"})}, {TaskID: "y", Node: "tools", Channel: "turn", Value: enc(t, 9)}}},
		{c4, []checkpoint.Write{{TaskID: "z", Node: "model", Channel: "messages", Value: []byte{}}}},
		{f1, []checkpoint.Write{{TaskID: "y", Node: "tools", Channel: "messages", Value: enc(t, []string{"w3"})}}},
		{c1, []checkpoint.Write{{TaskID: "x", Node: "n", Channel: "messages", Value: enc(t, []string{"w1 again"})}}},
	} {
		if err := s.PutWrites(ctx, "t", w.id, w.writes); err != nil {
			t.Fatal(err)
		}
	}
	// Thread "u" has the same channels and sequence numbers, so a lister
	// that mixed threads up would return its data.
	u0 := put("u", "", "", 0, "main", "other", false, nil)
	put("u", u0, u0, 1, "main", "other 2", false, nil, checkpoint.Write{TaskID: "x", Node: "n", Channel: "turn", Value: enc(t, 7)})

	// want is what List and Get give.
	want := func(thread string, opts checkpoint.ListOptions) []*checkpoint.Snapshot {
		t.Helper()
		cps, err := s.List(ctx, thread, opts)
		if err != nil {
			t.Fatalf("List(%+v): %v", opts, err)
		}
		var out []*checkpoint.Snapshot
		for _, cp := range cps {
			out = append(out, mustGet(t, s, thread, cp.ID))
		}
		return out
	}
	tests := []struct {
		name    string
		thread  string
		opts    checkpoint.ListOptions
		wantIDs []string
	}{
		{"all", "t", checkpoint.ListOptions{}, []string{c5, f2, f1, c4, c3, c2, c1, c0}},
		{"limit", "t", checkpoint.ListOptions{Limit: 3}, []string{c5, f2, f1}},
		{"before", "t", checkpoint.ListOptions{Before: f1}, []string{c4, c3, c2, c1, c0}},
		{"before and limit", "t", checkpoint.ListOptions{Before: c4, Limit: 2}, []string{c3, c2}},
		{"metadata", "t", checkpoint.ListOptions{Metadata: map[string]string{"branch": "fork"}}, []string{f2, f1}},
		{"metadata two keys", "t", checkpoint.ListOptions{Metadata: map[string]string{"branch": "main", "step": "3"}}, []string{c3}},
		{"metadata and page", "t", checkpoint.ListOptions{Before: c5, Limit: 2, Metadata: map[string]string{"branch": "main"}}, []string{c4, c3}},
		{"metadata no match", "t", checkpoint.ListOptions{Metadata: map[string]string{"branch": "none"}}, nil},
		{"other thread", "u", checkpoint.ListOptions{}, nil},
		{"empty thread", "nobody", checkpoint.ListOptions{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sl.ListSnapshots(ctx, tc.thread, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want(tc.thread, tc.opts), got, cmpOpts...); diff != "" {
				t.Errorf("ListSnapshots(%q, %+v) differs from List and Get (-want +got):\n%s", tc.thread, tc.opts, diff)
			}
			if tc.thread == "t" {
				var ids []string
				for _, snap := range got {
					ids = append(ids, snap.ID)
				}
				if diff := cmp.Diff(tc.wantIDs, ids, cmpOpts...); diff != "" {
					t.Errorf("checkpoints mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
	t.Run("pages", func(t *testing.T) {
		var got []*checkpoint.Snapshot
		for snap, err := range checkpoint.AllSnapshots(ctx, s, "t", checkpoint.ListOptions{Limit: 3}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, snap)
		}
		if diff := cmp.Diff(want("t", checkpoint.ListOptions{}), got, cmpOpts...); diff != "" {
			t.Errorf("AllSnapshots in pages of 3 differs from List and Get (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"a", "b", "c", "d", "e", "f"}, messages(t, got[0].Channels["messages"])); diff != "" {
			t.Errorf("messages at the latest checkpoint mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("before unknown", func(t *testing.T) {
		_, err := sl.ListSnapshots(ctx, "t", checkpoint.ListOptions{Before: "nope"})
		if !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("got %v; want ErrNotFound", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := sl.ListSnapshots(ctx, "t", checkpoint.ListOptions{}); !errors.Is(err, context.Canceled) {
			t.Errorf("got %v; want context.Canceled", err)
		}
	})
}
