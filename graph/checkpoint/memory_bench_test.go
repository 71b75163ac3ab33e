package checkpoint_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// BenchmarkMemoryStep measures what the engine pays per super-step with the
// in-memory Saver: one Put of a checkpoint whose step changed two of three
// channels, one as a delta. Payloads are encoded beforehand: encoding is the
// engine's cost, not the Saver's.
func BenchmarkMemoryStep(b *testing.B) {
	ctx := context.Background()
	s := checkpoint.NewMemory()
	delta := []byte(`["turn: a message of some length for the benchmark"]`)
	turn := []byte(`1`)
	const threadLen = 50
	var thread, prev string
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		step := i % threadLen
		if step == 0 {
			thread, prev = "t"+strconv.Itoa(i), ""
		}
		cp := &checkpoint.Checkpoint{
			ThreadID: thread, ParentID: prev, Step: step,
			Versions: map[string]uint64{"messages": uint64(step + 1), "turn": uint64(step + 1), "profile": 1},
			Ran:      []string{"model"},
		}
		blobs := []checkpoint.Blob{
			{Channel: "messages", Kind: checkpoint.Delta, Data: delta},
			{Channel: "turn", Kind: checkpoint.Full, Data: turn},
		}
		if step == 0 {
			blobs = append(blobs, checkpoint.Blob{Channel: "profile", Kind: checkpoint.Full, Data: turn})
		}
		if err := s.Put(ctx, prev, cp, blobs, nil); err != nil {
			b.Fatal(err)
		}
		prev = cp.ID
	}
}
