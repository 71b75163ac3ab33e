package checkpointtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// chatState is a chat-like state: a message list stored as deltas, a turn
// counter stored whole, and a profile written once.
type chatState struct {
	stats    checkpoint.ChainStats
	messages []string
	prev     string
	turn     int
	thread   string
}

var profile = []byte(`{"name":"Ada","locale":"en-GB","preferences":` + `"` + strings.Repeat("p", 1024) + `"}`)

// step saves the next checkpoint of the chat, appending one message of
// about 200 bytes, and returns the blob bytes it passed.
func (c *chatState) step(tb testing.TB, ctx context.Context, s checkpoint.Saver) int {
	c.turn++
	msg := fmt.Sprintf(`turn %d: %s`, c.turn, strings.Repeat("m", 180))
	c.messages = append(c.messages, msg)
	cp := &checkpoint.Checkpoint{
		ThreadID: c.thread, ParentID: c.prev, Step: c.turn,
		Versions: map[string]uint64{"messages": uint64(c.turn), "turn": uint64(c.turn), "profile": 1},
		Ran:      []string{"model"},
		Next:     []checkpoint.Task{{ID: "t", Node: "tools"}},
		Metadata: map[string]string{"source": "loop"},
	}
	delta, _ := checkpoint.Encode(checkpoint.JSON, []string{msg})
	msgs := checkpoint.Blob{Channel: "messages", Kind: checkpoint.Delta, Data: delta}
	if c.stats.NeedsFull() {
		full, _ := checkpoint.Encode(checkpoint.JSON, c.messages)
		msgs = checkpoint.Blob{Channel: "messages", Kind: checkpoint.Full, Data: full}
	}
	c.stats.Add(msgs.Kind, len(msgs.Data))
	turn, _ := checkpoint.Encode(checkpoint.JSON, c.turn)
	blobs := []checkpoint.Blob{msgs, {Channel: "turn", Kind: checkpoint.Full, Data: turn}}
	if c.turn == 1 {
		blobs = append(blobs, checkpoint.Blob{Channel: "profile", Kind: checkpoint.Full, Data: profile})
	}
	if err := s.Put(ctx, c.prev, cp, blobs, nil); err != nil {
		tb.Fatal(err)
	}
	c.prev = cp.ID
	n := 0
	for _, b := range blobs {
		n += len(b.Data)
	}
	return n
}

// wholeState is the size of the state stored whole, as a saver without
// shared blobs and deltas would store it at every step.
func (c *chatState) wholeState() int {
	msgs, _ := checkpoint.Encode(checkpoint.JSON, c.messages)
	turn, _ := checkpoint.Encode(checkpoint.JSON, c.turn)
	return len(msgs) + len(turn) + len(profile)
}

// BenchmarkPut measures one step of a chat-like thread on s: a Put of the
// step's checkpoint (a message appended as a delta, a counter, an unchanged
// profile) and a Get of the thread's latest checkpoint. Threads are 50 steps
// long, then a new thread starts, so the cost is that of a conversation of
// realistic length rather than of one ever-growing thread.
func BenchmarkPut(b *testing.B, s checkpoint.Saver) {
	ctx := context.Background()
	const threadLen = 50
	var c *chatState
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%threadLen == 0 {
			c = &chatState{thread: fmt.Sprintf("bench-%d", i/threadLen)}
		}
		c.step(b, ctx, s)
		snap, err := s.Get(ctx, c.thread, "")
		if err != nil {
			b.Fatal(err)
		}
		if snap.ID != c.prev {
			b.Fatalf("Get returned %s; want %s", snap.ID, c.prev)
		}
	}
}

// BenchmarkBytes runs a chat-like thread of 1000 steps on s and reports the
// blob bytes stored per checkpoint ("blobB/ckpt"), beside what storing the
// whole state at every step would take ("wholeB/ckpt"). Extra metrics, such
// as the on-disk size, can be measured by the caller through sized, which
// receives the number of checkpoints written; it may be nil.
func BenchmarkBytes(b *testing.B, s checkpoint.Saver, sized func(b *testing.B, checkpoints int)) {
	ctx := context.Background()
	const steps = 1000
	var blob, whole int64
	n := 0
	for i := 0; b.Loop(); i++ {
		c := &chatState{thread: fmt.Sprintf("bytes-%d", i)}
		for range steps {
			c.step(b, ctx, s)
			whole += int64(c.wholeState())
		}
		u, err := checkpoint.ThreadUsage(ctx, s, c.thread)
		if err != nil {
			b.Fatal(err)
		}
		blob += u.BlobBytes
		n += steps
	}
	b.ReportMetric(float64(blob)/float64(n), "blobB/ckpt")
	b.ReportMetric(float64(whole)/float64(n), "wholeB/ckpt")
	if sized != nil {
		sized(b, n)
	}
}

// BenchmarkHistory measures reading one page of a thread's history: the
// 100 snapshots of a 100-step chat-like thread, read with
// checkpoint.AllSnapshots in a page of 100. It runs two sub-benchmarks:
// "lister", through s's checkpoint.SnapshotLister (skipped when s does not
// implement it), and "get_each", through List and one Get per checkpoint,
// as a Saver without SnapshotLister is read.
func BenchmarkHistory(b *testing.B, s checkpoint.Saver) {
	ctx := context.Background()
	const steps = 100
	c := &chatState{thread: "history"}
	for range steps {
		c.step(b, ctx, s)
	}
	read := func(b *testing.B, s checkpoint.Saver) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for snap, err := range checkpoint.AllSnapshots(ctx, s, c.thread, checkpoint.ListOptions{Limit: steps}) {
				if err != nil {
					b.Fatal(err)
				}
				if len(snap.Channels) != 3 {
					b.Fatalf("snapshot %s has %d channels; want 3", snap.ID, len(snap.Channels))
				}
				n++
			}
			if n != steps {
				b.Fatalf("read %d snapshots; want %d", n, steps)
			}
		}
	}
	b.Run("lister", func(b *testing.B) {
		if _, ok := s.(checkpoint.SnapshotLister); !ok {
			b.Skip("the Saver does not implement checkpoint.SnapshotLister")
		}
		read(b, s)
	})
	b.Run("get_each", func(b *testing.B) {
		read(b, struct{ checkpoint.Saver }{s})
	})
}
