package checkpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestNeedsFullLongThread follows ChainStats.NeedsFull on a 20,000-step
// thread that appends one message per step, and checks that the bytes
// stored stay within a small constant factor of the messages written (no
// term growing with steps²) and that loading the latest checkpoint reads
// about the size of the value.
func TestNeedsFullLongThread(t *testing.T) {
	ctx := context.Background()
	s := checkpoint.NewMemory()
	const steps = 20_000
	var (
		prev   string
		msgs   []string
		stats  checkpoint.ChainStats
		fulls  int
		finalB int
	)
	for i := 1; i <= steps; i++ {
		// Messages of varying length, as in a chat.
		msgs = append(msgs, fmt.Sprintf("message %05d %s", i, strings.Repeat("x", 20+i%200)))
		kind, v := checkpoint.Delta, msgs[len(msgs)-1:]
		if stats.NeedsFull() {
			kind, v = checkpoint.Full, msgs
			fulls++
		}
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		stats.Add(kind, len(data))
		cp := &checkpoint.Checkpoint{ThreadID: "t", ParentID: prev, Step: i, Versions: map[string]uint64{"messages": uint64(i)}}
		if err := s.Put(ctx, prev, cp, []checkpoint.Blob{{Channel: "messages", Kind: kind, Data: data}}, nil); err != nil {
			t.Fatal(err)
		}
		prev = cp.ID
	}
	final, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	finalB = len(final)
	u, err := s.Usage(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	// Every message once as a delta, plus full values that at least double
	// each time (together at most about twice the final list).
	if limit := int64(3 * finalB); u.BlobBytes > limit {
		t.Errorf("%d steps stored %d bytes for a final value of %d bytes (%.2fx); want at most 3x", steps, u.BlobBytes, finalB, float64(u.BlobBytes)/float64(finalB))
	}
	if fulls > 20 {
		t.Errorf("%d full values in %d steps; want about log2(steps)", fulls, steps)
	}
	snap, err := s.Get(ctx, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	read := snap.Channels["messages"].Stats()
	if got := read.FullBytes + read.DeltaBytes; got > 2*finalB+64 {
		t.Errorf("loading the latest checkpoint reads %d bytes; want at most about twice the value's %d", got, finalB)
	}
	t.Logf("%d steps: final value %d bytes, %d stored (%.2fx), %d full values", steps, finalB, u.BlobBytes, float64(u.BlobBytes)/float64(finalB), fulls)
}
