package checkpointtest

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Corrupter is implemented by a Saver under test that lets the suite damage
// its stored data, as a failing disk, a faulty migration or a hand edit of
// the database could. When the Saver given to Run implements it, the suite
// checks that loading damaged checkpoints fails fast with a
// *checkpoint.CorruptError; a test wraps its Saver in a type adding these
// methods, which write to the storage directly.
//
// Checkpoints are named by their position in their thread, counting from 1
// in the order they were saved, and blobs by the position of the checkpoint
// that wrote them.
type Corrupter interface {
	// CorruptBlob rewrites the blob that the n-th checkpoint of the thread
	// wrote for channel: its kind becomes kind, and the blob it applies to
	// becomes the one written by the base-th checkpoint (0 for none). The
	// blob's data is kept.
	CorruptBlob(ctx context.Context, threadID, channel string, n int64, kind checkpoint.Kind, base int64) error
	// CorruptRef makes the n-th checkpoint of the thread find channel in
	// the blob written by the writer-th checkpoint.
	CorruptRef(ctx context.Context, threadID string, n int64, channel string, writer int64) error
}

// Limits on loading a corrupt checkpoint, which CheckCorrupt enforces.
const (
	// CorruptDeadline is the deadline of each load: it must fail with the
	// corrupt error before, not with context.DeadlineExceeded.
	CorruptDeadline = time.Second
	// CorruptAllocBytes bounds the bytes each load may allocate.
	CorruptAllocBytes = 10 << 20
)

// CheckCorrupt checks that loading checkpoint checkpointID of the thread
// ("" for the latest) fails with a *checkpoint.CorruptError naming the
// thread and, when checkpointID is set, the checkpoint, within
// CorruptDeadline and allocating less than CorruptAllocBytes: with Get and,
// when s is a checkpoint.SnapshotLister, with a ListSnapshots page holding
// the checkpoint. It logs the time and bytes of each load.
func CheckCorrupt(t *testing.T, s checkpoint.Saver, threadID, checkpointID string) {
	t.Helper()
	loads := []struct {
		name string
		load func(ctx context.Context) error
	}{
		{"Get", func(ctx context.Context) error { _, err := s.Get(ctx, threadID, checkpointID); return err }},
	}
	if sl, ok := s.(checkpoint.SnapshotLister); ok {
		loads = append(loads, struct {
			name string
			load func(ctx context.Context) error
		}{"ListSnapshots", func(ctx context.Context) error {
			_, err := sl.ListSnapshots(ctx, threadID, checkpoint.ListOptions{Limit: 100})
			return err
		}})
	}
	for _, l := range loads {
		ctx, cancel := context.WithTimeout(context.Background(), CorruptDeadline)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		err := l.load(ctx)
		elapsed := time.Since(start)
		runtime.ReadMemStats(&after)
		cancel()
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %v, %d bytes allocated: %v", l.name, elapsed.Round(time.Microsecond), alloc, err)
		var ce *checkpoint.CorruptError
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			t.Errorf("%s: %v; want the corrupt error within %v", l.name, err, CorruptDeadline)
		case !errors.Is(err, checkpoint.ErrCorrupt) || !errors.As(err, &ce):
			t.Errorf("%s: %v; want a *checkpoint.CorruptError", l.name, err)
		case ce.ThreadID != threadID || !strings.Contains(err.Error(), threadID):
			t.Errorf("%s: error %q does not name thread %q", l.name, err, threadID)
		case l.name == "Get" && checkpointID != "" && (ce.CheckpointID != checkpointID || !strings.Contains(err.Error(), checkpointID)):
			t.Errorf("%s: error %q does not name checkpoint %q", l.name, err, checkpointID)
		}
		if alloc >= CorruptAllocBytes {
			t.Errorf("%s: allocated %d bytes; want less than %d", l.name, alloc, CorruptAllocBytes)
		}
	}
}

// testCorrupt damages the stored data of threads in every way a Corrupter
// can and checks that each damaged checkpoint fails to load with the
// corrupt error, quickly and in little memory, while the checkpoints before
// the damage and other threads still load.
func testCorrupt(t *testing.T, s checkpoint.Saver) {
	c, ok := s.(Corrupter)
	if !ok {
		t.Skip("the Saver does not implement checkpointtest.Corrupter")
	}
	ctx := context.Background()
	// Each thread: "messages" whole at 1 and a delta at 2, 3 and 4;
	// "profile" written once at 1; "count" whole at every checkpoint.
	build := func(t *testing.T, thread string) []string {
		t.Helper()
		var ids []string
		prev := ""
		for i := 1; i <= 4; i++ {
			versions := map[string]uint64{"messages": uint64(i), "profile": 1, "count": uint64(i)}
			blobs := []checkpoint.Blob{
				{Channel: "messages", Kind: checkpoint.Delta, Data: enc(t, []string{"m"})},
				{Channel: "count", Kind: checkpoint.Full, Data: enc(t, i)},
			}
			if i == 1 {
				blobs[0] = checkpoint.Blob{Channel: "messages", Kind: checkpoint.Full, Data: enc(t, []string{"m"})}
				blobs = append(blobs, checkpoint.Blob{Channel: "profile", Kind: checkpoint.Full, Data: enc(t, "ada")})
			}
			prev = mustPut(t, s, prev, &checkpoint.Checkpoint{ThreadID: thread, ParentID: prev, Step: i, Versions: versions}, blobs...)
			ids = append(ids, prev)
		}
		return ids
	}
	blob := func(n int64, kind checkpoint.Kind, base int64) func(*testing.T, string) error {
		return func(t *testing.T, thread string) error {
			return c.CorruptBlob(ctx, thread, "messages", n, kind, base)
		}
	}
	tests := []struct {
		name string
		// damage damages the thread, after which the checkpoints at the
		// positions in corrupt (counting from 1) are corrupt and the others
		// load.
		damage  func(*testing.T, string) error
		corrupt []int
	}{
		{"cycle", blob(2, checkpoint.Delta, 4), []int{2, 3, 4}},
		{"loop of two", blob(2, checkpoint.Delta, 3), []int{2, 3, 4}},
		{"self-reference", blob(3, checkpoint.Delta, 3), []int{3, 4}},
		{"newer base", blob(4, checkpoint.Delta, 5), []int{4}},
		{"unknown kind", blob(3, 200, 2), []int{3, 4}},
		{"zero kind", blob(3, 0, 2), []int{3, 4}},
		{"absurd base", blob(3, checkpoint.Delta, math.MaxInt64), []int{3, 4}},
		{"negative base", blob(3, checkpoint.Delta, math.MinInt64), []int{3, 4}},
		{"absurd reference", func(t *testing.T, thread string) error {
			return c.CorruptRef(ctx, thread, 4, "messages", math.MaxInt64)
		}, []int{4}},
		{"negative reference", func(t *testing.T, thread string) error {
			return c.CorruptRef(ctx, thread, 4, "count", math.MinInt64)
		}, []int{4}},
		{"reference to a newer blob", func(t *testing.T, thread string) error {
			return c.CorruptRef(ctx, thread, 2, "count", 3)
		}, []int{2}},
		{"missing blob", func(t *testing.T, thread string) error {
			return c.CorruptRef(ctx, thread, 4, "profile", 3)
		}, []int{4}},
	}
	sound := build(t, "sound")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			thread := "corrupt-" + strings.ReplaceAll(tc.name, " ", "-")
			ids := build(t, thread)
			if err := tc.damage(t, thread); err != nil {
				t.Fatalf("damaging the thread: %v", err)
			}
			for i, id := range ids {
				if !slices.Contains(tc.corrupt, i+1) {
					if got := messages(t, mustGet(t, s, thread, id).Channels["messages"]); len(got) != i+1 {
						t.Errorf("undamaged checkpoint %d holds %d messages; want %d", i+1, len(got), i+1)
					}
					continue
				}
				t.Logf("checkpoint %d:", i+1)
				CheckCorrupt(t, s, thread, id)
				if i+1 == len(ids) {
					t.Log("latest checkpoint:")
					CheckCorrupt(t, s, thread, "")
				}
			}
			var last error
			for _, err := range checkpoint.AllSnapshots(ctx, s, thread, checkpoint.ListOptions{}) {
				last = err
			}
			if !errors.Is(last, checkpoint.ErrCorrupt) {
				t.Errorf("AllSnapshots ended with %v; want the corrupt error", last)
			}
		})
	}
	// The damage stays in its threads.
	if got := messages(t, mustGet(t, s, "sound", sound[3]).Channels["messages"]); len(got) != 4 {
		t.Errorf("an undamaged thread holds %d messages; want 4", len(got))
	}
}
