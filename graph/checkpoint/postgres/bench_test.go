package postgres_test

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/checkpointtest"
)

// BenchmarkPut measures one step of a chat-like thread: a Put and a Get of
// the thread's latest checkpoint (checkpointtest.BenchmarkPut).
func BenchmarkPut(b *testing.B) {
	checkpointtest.BenchmarkPut(b, newSaver(b))
}

// BenchmarkGet measures a Get of a thread's latest checkpoint: two channels,
// one of them a full value followed by three deltas, and two pending
// writes.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	s := newSaver(b)
	prev := ""
	for i := 1; i <= 4; i++ {
		kind := checkpoint.Delta
		if i == 1 {
			kind = checkpoint.Full
		}
		cp := &checkpoint.Checkpoint{ThreadID: "t", ParentID: prev, Step: i,
			Versions: map[string]uint64{"messages": uint64(i), "profile": 1}}
		blobs := []checkpoint.Blob{{Channel: "messages", Kind: kind, Data: []byte(`["a message of some length"]`)}}
		if i == 1 {
			blobs = append(blobs, checkpoint.Blob{Channel: "profile", Kind: checkpoint.Full, Data: []byte(`{"name":"Ada"}`)})
		}
		if err := s.Put(ctx, prev, cp, blobs, nil); err != nil {
			b.Fatal(err)
		}
		prev = cp.ID
	}
	if err := s.PutWrites(ctx, "t", prev, []checkpoint.Write{{TaskID: "a", Node: "n", Channel: "messages", Value: []byte(`"x"`)}, {TaskID: "b", Node: "m", Channel: "messages", Value: []byte(`"y"`)}}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		snap, err := s.Get(ctx, "t", "")
		if err != nil {
			b.Fatal(err)
		}
		if len(snap.Channels["messages"].Deltas) != 3 || len(snap.Writes) != 2 {
			b.Fatalf("Get = %+v; want 3 deltas and 2 writes", snap)
		}
	}
}
