package checkpointtest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// testUsageTotals checks Usage after every kind of operation that adds or
// removes a thread's rows (Put, Put with writes, PutWrites replacing a
// task's writes, CopyThread, Prune, DeleteThread and a thread saved again
// after its deletion), so that a saver keeping running totals fails when
// one operation does not keep them.
func testUsageTotals(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	if _, ok := usage(t, s, "t"); !ok {
		t.Skip("not a checkpoint.UsageReporter")
	}
	want := func(thread string, w checkpoint.Usage) {
		t.Helper()
		got, _ := usage(t, s, thread)
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("Usage(%q) mismatch (-want +got):\n%s", thread, diff)
		}
	}
	full := func(ch, data string) checkpoint.Blob {
		return checkpoint.Blob{Channel: ch, Kind: checkpoint.Full, Data: []byte(data)}
	}
	put := func(thread, parent string, step int, v uint64, writes []checkpoint.Write, blobs ...checkpoint.Blob) string {
		t.Helper()
		versions := map[string]uint64{}
		for _, b := range blobs {
			versions[b.Channel] = v
		}
		cp := &checkpoint.Checkpoint{ThreadID: thread, ParentID: parent, Step: step, Versions: versions}
		if err := s.Put(ctx, parent, cp, blobs, writes); err != nil {
			t.Fatalf("Put(%s step %d): %v", thread, step, err)
		}
		return cp.ID
	}
	c1 := put("t", "", 0, 1, nil, full("a", `"1"`), full("b", `"22"`))
	want("t", checkpoint.Usage{Checkpoints: 1, Blobs: 2, BlobBytes: 7})
	c2 := put("t", c1, 1, 2, []checkpoint.Write{{TaskID: "x", Node: "n", Channel: "a", Value: []byte(`"333"`)}}, full("a", `"4444"`))
	want("t", checkpoint.Usage{Checkpoints: 2, Blobs: 3, BlobBytes: 13, Writes: 1, WriteBytes: 5})
	// PutWrites adds a task's writes and replaces those it stored before.
	if err := s.PutWrites(ctx, "t", c2, []checkpoint.Write{{TaskID: "y", Node: "n", Channel: "b", Value: []byte(`"55555"`)}}); err != nil {
		t.Fatal(err)
	}
	want("t", checkpoint.Usage{Checkpoints: 2, Blobs: 3, BlobBytes: 13, Writes: 2, WriteBytes: 12})
	if err := s.PutWrites(ctx, "t", c2, []checkpoint.Write{{TaskID: "x", Node: "n", Channel: "a", Value: []byte(`1`)}, {TaskID: "x", Node: "n", Channel: "b", Value: []byte(`22`)}}); err != nil {
		t.Fatal(err)
	}
	want("t", checkpoint.Usage{Checkpoints: 2, Blobs: 3, BlobBytes: 13, Writes: 3, WriteBytes: 10})
	if err := s.PutWrites(ctx, "t", c1, []checkpoint.Write{{TaskID: "z", Node: "n", Channel: "a", Value: []byte(`"7"`)}}); err != nil {
		t.Fatal(err)
	}
	want("t", checkpoint.Usage{Checkpoints: 2, Blobs: 3, BlobBytes: 13, Writes: 4, WriteBytes: 13})
	c3 := put("t", c2, 2, 3, nil, full("a", `0`), full("b", `0`))
	want("t", checkpoint.Usage{Checkpoints: 3, Blobs: 5, BlobBytes: 15, Writes: 4, WriteBytes: 13})
	if _, ok := s.(checkpoint.Copier); ok {
		if _, err := checkpoint.CopyThread(ctx, s, "t", "u"); err != nil {
			t.Fatal(err)
		}
		want("u", checkpoint.Usage{Checkpoints: 3, Blobs: 5, BlobBytes: 15, Writes: 4, WriteBytes: 13})
		want("t", checkpoint.Usage{Checkpoints: 3, Blobs: 5, BlobBytes: 15, Writes: 4, WriteBytes: 13})
	}
	if _, ok := s.(checkpoint.Pruner); ok {
		// The newest checkpoint stays, with neither writes nor the blobs
		// of the older ones, which it does not refer to.
		if _, err := checkpoint.Prune(ctx, s, checkpoint.Retention{ThreadID: "t", KeepLatest: 1}); err != nil {
			t.Fatal(err)
		}
		want("t", checkpoint.Usage{Checkpoints: 1, Blobs: 2, BlobBytes: 2})
		if err := s.PutWrites(ctx, "t", c3, []checkpoint.Write{{TaskID: "x", Node: "n", Channel: "a", Value: []byte(`12`)}}); err != nil {
			t.Fatal(err)
		}
		want("t", checkpoint.Usage{Checkpoints: 1, Blobs: 2, BlobBytes: 2, Writes: 1, WriteBytes: 2})
	}
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	want("t", checkpoint.Usage{})
	put("t", "", 0, 1, nil, full("a", `"1"`))
	want("t", checkpoint.Usage{Checkpoints: 1, Blobs: 1, BlobBytes: 3})
	if _, ok := s.(checkpoint.Copier); ok {
		want("u", checkpoint.Usage{Checkpoints: 3, Blobs: 5, BlobBytes: 15, Writes: 4, WriteBytes: 13})
	}
}
