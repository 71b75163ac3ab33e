// Package checkpointtest is the conformance suite for implementations of
// checkpoint.Saver. Every backend in this module passes it; run it against
// your own Saver from a test:
//
//	func TestSaver(t *testing.T) {
//		checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
//			return newMySaver(t) // an empty store, closed by t.Cleanup
//		})
//	}
//
// Each subtest asks for a fresh, empty Saver. The suite checks saving and
// loading, listing and pagination, shared blobs and delta chains, pending
// writes, conflicts, forks, deletion, concurrent writers, cancellation, and
// that IDs and names that not every backend can store are refused alike.
// It checks the optional interfaces a Saver implements: the stored blobs
// and bytes when it is a checkpoint.UsageReporter, retention when it is a
// checkpoint.Pruner, whole pages of snapshots when it is a
// checkpoint.SnapshotLister, and that damaged data fails to load with
// checkpoint.ErrCorrupt, quickly and in little memory, when the Saver under
// test is a Corrupter.
package checkpointtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Run runs the conformance suite. newSaver must return an empty Saver each
// time it is called, and release it with t.Cleanup.
func Run(t *testing.T, newSaver func(t *testing.T) checkpoint.Saver) {
	tests := []struct {
		name string
		fn   func(*testing.T, checkpoint.Saver)
	}{
		{"PutGet", testPutGet},
		{"NotFound", testNotFound},
		{"Invalid", testInvalid},
		{"IDs", testIDs},
		{"List", testList},
		{"SharedBlobs", testSharedBlobs},
		{"Deltas", testDeltas},
		{"StorageGrowth", testStorageGrowth},
		{"PendingWrites", testPendingWrites},
		{"PutWithWrites", testPutWithWrites},
		{"Conflict", testConflict},
		{"Fork", testFork},
		{"ListSnapshots", testListSnapshots},
		{"DeleteThread", testDeleteThread},
		{"KeepLatest", testKeepLatest},
		{"CopyAfterPrune", testCopyAfterPrune},
		{"PatchMetadata", testPatchMetadata},
		{"UsageTotals", testUsageTotals},
		{"IdleTTL", testIdleTTL},
		{"ConcurrentWriters", testConcurrentWriters},
		{"Cancelled", testCancelled},
		{"Corrupt", testCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newSaver(t))
		})
	}
}

// cmpOpts compares checkpoints, treating nil and empty alike and times by
// instant.
var cmpOpts = []cmp.Option{
	cmpopts.EquateEmpty(),
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
}

// chat is a small model of an engine's state: an append-only list of
// messages stored as deltas, a counter stored whole, and a profile written
// once.
type chat struct {
	Messages []string
	Count    int
}

func enc(t testing.TB, v any) []byte {
	t.Helper()
	b, err := checkpoint.Encode(checkpoint.JSON, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// messages rebuilds a list channel from its base and deltas, as an engine
// with an append reducer does.
func messages(t testing.TB, c checkpoint.Channel) []string {
	t.Helper()
	var out []string
	if c.Base != nil {
		v, err := checkpoint.Decode[[]string](checkpoint.JSON, c.Base)
		if err != nil {
			t.Fatal(err)
		}
		out = v
	}
	for _, d := range c.Deltas {
		v, err := checkpoint.Decode[[]string](checkpoint.JSON, d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v...)
	}
	return out
}

func mustPut(t testing.TB, s checkpoint.Saver, expect string, cp *checkpoint.Checkpoint, blobs ...checkpoint.Blob) string {
	t.Helper()
	if err := s.Put(context.Background(), expect, cp, blobs, nil); err != nil {
		t.Fatalf("Put(expect %q, step %d): %v", expect, cp.Step, err)
	}
	if cp.ID == "" {
		t.Fatalf("Put did not assign Checkpoint.ID")
	}
	return cp.ID
}

func mustGet(t testing.TB, s checkpoint.Saver, thread, id string) *checkpoint.Snapshot {
	t.Helper()
	snap, err := s.Get(context.Background(), thread, id)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", thread, id, err)
	}
	return snap
}

// usage returns the storage the thread takes and true when s is a
// checkpoint.UsageReporter, and false otherwise: the suite checks stored
// blobs and bytes only on Savers that report them.
func usage(t testing.TB, s checkpoint.Saver, thread string) (checkpoint.Usage, bool) {
	t.Helper()
	r, ok := s.(checkpoint.UsageReporter)
	if !ok {
		return checkpoint.Usage{}, false
	}
	u, err := r.Usage(context.Background(), thread)
	if err != nil {
		t.Fatalf("Usage(%q): %v", thread, err)
	}
	return u, true
}

// pruner returns s as a checkpoint.Pruner, or skips the test when s is not
// one.
func pruner(t *testing.T, s checkpoint.Saver) checkpoint.Pruner {
	t.Helper()
	p, ok := s.(checkpoint.Pruner)
	if !ok {
		t.Skip("the Saver does not implement checkpoint.Pruner")
	}
	return p
}

func ids(cps []checkpoint.Checkpoint) []string {
	out := make([]string, len(cps))
	for i, c := range cps {
		out[i] = c.ID
	}
	return out
}

// appendStep puts a checkpoint that appends msg to the "messages" channel
// as a delta and returns its ID.
func appendStep(t testing.TB, s checkpoint.Saver, thread, expect, parent string, step int, version uint64, msg string) string {
	t.Helper()
	cp := &checkpoint.Checkpoint{
		ThreadID: thread, ParentID: parent, Step: step,
		Versions: map[string]uint64{"messages": version},
	}
	return mustPut(t, s, expect, cp, checkpoint.Blob{Channel: "messages", Kind: checkpoint.Delta, Data: enc(t, []string{msg})})
}

func testPutGet(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	created := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	first := &checkpoint.Checkpoint{
		ThreadID: "t1",
		Step:     -1,
		Versions: map[string]uint64{"messages": 1, "count": 1},
		Ran:      []string{"__input__"},
		Next: []checkpoint.Task{
			{ID: "task-a", Node: "a"},
			{ID: "task-b", Node: "b", Input: []byte(`{"x":1}`)},
		},
		Metadata:  map[string]string{"source": "input", "user": "ada"},
		CreatedAt: created,
	}
	id1 := mustPut(t, s, "", first,
		checkpoint.Blob{Channel: "messages", Kind: checkpoint.Full, Data: enc(t, []string{"hi"})},
		checkpoint.Blob{Channel: "count", Kind: checkpoint.Full, Data: enc(t, 1)},
	)
	second := &checkpoint.Checkpoint{
		ThreadID:   "t1",
		ParentID:   id1,
		Step:       0,
		Versions:   map[string]uint64{"messages": 2, "count": 1},
		Ran:        []string{"a", "b"},
		Interrupts: []checkpoint.Interrupt{{ID: "i1", Node: "b", TaskID: "task-b", Payload: []byte(`"approve?"`)}},
		Metadata:   map[string]string{"source": "loop"},
	}
	before := time.Now()
	id2 := mustPut(t, s, id1, second, checkpoint.Blob{Channel: "messages", Kind: checkpoint.Delta, Data: enc(t, []string{"hello"})})
	if id1 == id2 {
		t.Fatalf("two checkpoints got the same ID %q", id1)
	}
	if second.CreatedAt.Before(before.Add(-time.Second)) || second.CreatedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("Put set CreatedAt to %v; want about %v", second.CreatedAt, before)
	}

	tests := []struct {
		name, id string
		want     checkpoint.Checkpoint
		msgs     []string
	}{
		{"first by id", id1, *first, []string{"hi"}},
		{"second by id", id2, *second, []string{"hi", "hello"}},
		{"latest", "", *second, []string{"hi", "hello"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap, err := s.Get(ctx, "t1", tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, snap.Checkpoint, cmpOpts...); diff != "" {
				t.Errorf("checkpoint mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.msgs, messages(t, snap.Channels["messages"])); diff != "" {
				t.Errorf("messages mismatch (-want +got):\n%s", diff)
			}
			count, err := checkpoint.Decode[int](checkpoint.JSON, snap.Channels["count"].Base)
			if err != nil || count != 1 {
				t.Errorf("count = %d, %v; want 1", count, err)
			}
			if len(snap.Channels) != 2 {
				t.Errorf("got %d channels; want 2", len(snap.Channels))
			}
		})
	}
}

func testNotFound(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	id := appendStep(t, s, "t", "", "", 0, 1, "a")
	tests := []struct {
		name string
		call func() error
	}{
		{"latest of unknown thread", func() error { _, err := s.Get(ctx, "nope", ""); return err }},
		{"unknown checkpoint", func() error { _, err := s.Get(ctx, "t", "nope"); return err }},
		{"checkpoint of another thread", func() error { _, err := s.Get(ctx, "other", id); return err }},
		{"writes to unknown checkpoint", func() error {
			return s.PutWrites(ctx, "t", "nope", []checkpoint.Write{{TaskID: "x", Channel: "c"}})
		}},
		{"unknown parent", func() error {
			return s.Put(ctx, id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: "nope"}, nil, nil)
		}},
		{"list before unknown checkpoint", func() error {
			_, err := s.List(ctx, "t", checkpoint.ListOptions{Before: "nope"})
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Errorf("got %v; want an error wrapping ErrNotFound", err)
			}
		})
	}
	if u, ok := usage(t, s, "nope"); ok && u != (checkpoint.Usage{}) {
		t.Errorf("Usage of unknown thread = %+v; want zero", u)
	}
	if got, err := s.List(ctx, "nope", checkpoint.ListOptions{}); err != nil || len(got) != 0 {
		t.Errorf("List of unknown thread = %v, %v; want empty", got, err)
	}
}

func testInvalid(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	full := func(ch string) checkpoint.Blob {
		return checkpoint.Blob{Channel: ch, Kind: checkpoint.Full, Data: []byte("1")}
	}
	id := mustPut(t, s, "", &checkpoint.Checkpoint{ThreadID: "t", Versions: map[string]uint64{"a": 1, "b": 1}}, full("a"), full("b"))
	tests := []struct {
		name   string
		expect string
		cp     *checkpoint.Checkpoint
		blobs  []checkpoint.Blob
		field  string
	}{
		{"no thread", "", &checkpoint.Checkpoint{}, nil, "ThreadID"},
		{"nil checkpoint", "", nil, nil, "nil"},
		{"blob not in versions", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1}}, []checkpoint.Blob{full("z")}, `"z"`},
		{"bad kind", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 2}}, []checkpoint.Blob{{Channel: "a"}}, "Kind"},
		{"two blobs for a channel", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 2}}, []checkpoint.Blob{full("a"), full("a")}, `"a"`},
		{"changed version without blob", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 2, "b": 1}}, nil, `"a"`},
		{"new channel without blob", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1, "c": 1}}, nil, `"c"`},
		{"version not increased", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1}}, []checkpoint.Blob{full("a")}, "version"},
		{"duplicate id", id, &checkpoint.Checkpoint{ThreadID: "t", ID: id, ParentID: ""}, nil, id},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Put(ctx, tc.expect, tc.cp, tc.blobs, nil)
			if !errors.Is(err, checkpoint.ErrInvalid) {
				t.Fatalf("got %v; want an error wrapping ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %s", err, tc.field)
			}
		})
	}
	if err := s.PutWrites(ctx, "t", id, []checkpoint.Write{{TaskID: "", Channel: "a"}}); !errors.Is(err, checkpoint.ErrInvalid) {
		t.Errorf("PutWrites without TaskID: got %v; want ErrInvalid", err)
	}
	if _, err := checkpoint.Prune(ctx, s, checkpoint.Retention{KeepLatest: -1}); !errors.Is(err, checkpoint.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Prune with KeepLatest -1: got %v; want ErrInvalid", err)
	}
	if u, ok := usage(t, s, "t"); ok && (u.Checkpoints != 1 || u.Blobs != 2) {
		t.Errorf("after rejected puts Usage = %+v; want 1 checkpoint and 2 blobs", u)
	}
}

func testList(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	var all []string // oldest first
	prev := ""
	for i := range 10 {
		source := "loop"
		if i%3 == 0 {
			source = "update"
		}
		cp := &checkpoint.Checkpoint{
			ThreadID: "t", ParentID: prev, Step: i,
			Versions: map[string]uint64{"n": uint64(i + 1)},
			Metadata: map[string]string{"source": source, "user": "ada"},
		}
		prev = mustPut(t, s, prev, cp, checkpoint.Blob{Channel: "n", Kind: checkpoint.Full, Data: enc(t, i)})
		all = append(all, prev)
	}
	appendStep(t, s, "other", "", "", 0, 1, "x")
	newest := slices.Clone(all)
	slices.Reverse(newest)

	got, err := s.List(ctx, "t", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(newest, ids(got)); diff != "" {
		t.Errorf("List order mismatch (-want +got):\n%s", diff)
	}
	if got[0].Step != 9 || got[0].Versions["n"] != 10 || got[0].Metadata["user"] != "ada" || got[0].ParentID != all[8] {
		t.Errorf("List()[0] = %+v; want step 9, version 10, user ada, parent %s", got[0], all[8])
	}

	// Pages of 4: 4, 4, 2, then nothing.
	var paged []string
	before := ""
	for page := 0; ; page++ {
		got, err := s.List(ctx, "t", checkpoint.ListOptions{Before: before, Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			break
		}
		if len(got) > 4 {
			t.Fatalf("page %d has %d checkpoints; Limit is 4", page, len(got))
		}
		paged = append(paged, ids(got)...)
		before = got[len(got)-1].ID
		if page > 5 {
			t.Fatal("pagination does not end")
		}
	}
	if diff := cmp.Diff(newest, paged); diff != "" {
		t.Errorf("paged List mismatch (-want +got):\n%s", diff)
	}

	got, err = s.List(ctx, "t", checkpoint.ListOptions{Metadata: map[string]string{"source": "update"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{all[9], all[6], all[3], all[0]}, ids(got)); diff != "" {
		t.Errorf("filtered List mismatch (-want +got):\n%s", diff)
	}
	got, err = s.List(ctx, "t", checkpoint.ListOptions{Metadata: map[string]string{"source": "update"}, Before: all[6], Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{all[3]}, ids(got)); diff != "" {
		t.Errorf("filtered page mismatch (-want +got):\n%s", diff)
	}
	got, err = s.List(ctx, "t", checkpoint.ListOptions{Metadata: map[string]string{"source": "update", "user": "bob"}})
	if err != nil || len(got) != 0 {
		t.Errorf("List with unmatched filter = %v, %v; want none", ids(got), err)
	}
}

func testSharedBlobs(t *testing.T, s checkpoint.Saver) {
	profile := enc(t, strings.Repeat("p", 4096))
	prev := mustPut(t, s, "", &checkpoint.Checkpoint{ThreadID: "t", Versions: map[string]uint64{"profile": 1, "count": 1}},
		checkpoint.Blob{Channel: "profile", Kind: checkpoint.Full, Data: profile},
		checkpoint.Blob{Channel: "count", Kind: checkpoint.Full, Data: enc(t, 0)},
	)
	first := prev
	wantBytes := int64(len(profile) + len(enc(t, 0)))
	const steps = 50
	for i := 1; i <= steps; i++ {
		data := enc(t, i)
		wantBytes += int64(len(data))
		prev = mustPut(t, s, prev, &checkpoint.Checkpoint{
			ThreadID: "t", ParentID: prev, Step: i,
			Versions: map[string]uint64{"profile": 1, "count": uint64(i + 1)},
		}, checkpoint.Blob{Channel: "count", Kind: checkpoint.Full, Data: data})
	}
	if u, ok := usage(t, s, "t"); ok {
		want := checkpoint.Usage{Checkpoints: steps + 1, Blobs: steps + 2, BlobBytes: wantBytes}
		if diff := cmp.Diff(want, u); diff != "" {
			t.Errorf("Usage mismatch (-want +got):\n%s", diff)
		}
	}
	for _, id := range []string{first, prev} {
		snap := mustGet(t, s, "t", id)
		if diff := cmp.Diff(profile, snap.Channels["profile"].Base); diff != "" {
			t.Errorf("profile at %s mismatch (-want +got):\n%s", id, diff)
		}
	}
	last := mustGet(t, s, "t", "")
	if n, _ := checkpoint.Decode[int](checkpoint.JSON, last.Channels["count"].Base); n != steps {
		t.Errorf("count at latest = %d; want %d", n, steps)
	}
}

func testDeltas(t *testing.T, s checkpoint.Saver) {
	// Steps 1-3 append deltas on an empty channel, step 4 writes the whole
	// list, steps 5-6 append again.
	var ckpts []string
	var want [][]string
	prev := ""
	var msgs []string
	for i := 1; i <= 6; i++ {
		msg := fmt.Sprintf("m%d", i)
		msgs = append(msgs, msg)
		blob := checkpoint.Blob{Channel: "messages", Kind: checkpoint.Delta, Data: enc(t, []string{msg})}
		if i == 4 {
			blob = checkpoint.Blob{Channel: "messages", Kind: checkpoint.Full, Data: enc(t, msgs)}
		}
		prev = mustPut(t, s, prev, &checkpoint.Checkpoint{
			ThreadID: "t", ParentID: prev, Step: i, Versions: map[string]uint64{"messages": uint64(i)},
		}, blob)
		ckpts = append(ckpts, prev)
		want = append(want, slices.Clone(msgs))
	}
	for i, id := range ckpts {
		snap := mustGet(t, s, "t", id)
		c := snap.Channels["messages"]
		if diff := cmp.Diff(want[i], messages(t, c)); diff != "" {
			t.Errorf("messages at step %d mismatch (-want +got):\n%s", i+1, diff)
		}
		wantDeltas := i + 1
		if i >= 3 {
			wantDeltas = i - 3
		}
		if len(c.Deltas) != wantDeltas || (i >= 3) != (c.Base != nil) {
			t.Errorf("step %d: base %q with %d deltas; want %d deltas, base only from step 4 on", i+1, c.Base, len(c.Deltas), wantDeltas)
		}
	}
}

func testStorageGrowth(t *testing.T, s checkpoint.Saver) {
	// A chat of 1000 steps, each appending one message of about 100 bytes,
	// with the engine's snapshot policy deciding between deltas and full
	// values. The stored bytes must stay proportional to the messages, not
	// to steps x state.
	const steps = 1000
	var (
		prev     string
		msgs     []string
		stats    checkpoint.ChainStats
		msgBytes int64
	)
	for i := 1; i <= steps; i++ {
		msg := fmt.Sprintf("message %04d %s", i, strings.Repeat("x", 80))
		msgs = append(msgs, msg)
		delta := enc(t, []string{msg})
		msgBytes += int64(len(delta))
		blob := checkpoint.Blob{Channel: "messages", Kind: checkpoint.Delta, Data: delta}
		if stats.NeedsFull() {
			blob = checkpoint.Blob{Channel: "messages", Kind: checkpoint.Full, Data: enc(t, msgs)}
		}
		stats.Add(blob.Kind, len(blob.Data))
		prev = mustPut(t, s, prev, &checkpoint.Checkpoint{
			ThreadID: "t", ParentID: prev, Step: i, Versions: map[string]uint64{"messages": uint64(i)},
		}, blob)
	}
	if u, ok := usage(t, s, "t"); ok {
		if u.Checkpoints != steps {
			t.Errorf("Usage.Checkpoints = %d; want %d", u.Checkpoints, steps)
		}
		// Full values grow geometrically, so they add at most about twice
		// the final list; whole-state copies would take about steps/2 times
		// it.
		if limit := 4 * msgBytes; u.BlobBytes > limit {
			t.Errorf("1000 steps stored %d blob bytes for %d message bytes; want at most %d", u.BlobBytes, msgBytes, limit)
		}
		t.Logf("%d steps: %d message bytes, %d blob bytes stored (%.1f per checkpoint)", steps, msgBytes, u.BlobBytes, float64(u.BlobBytes)/steps)
	}
	snap := mustGet(t, s, "t", "")
	if diff := cmp.Diff(msgs, messages(t, snap.Channels["messages"])); diff != "" {
		t.Errorf("rebuilt messages mismatch (-want +got):\n%s", diff)
	}
	if got := snap.Channels["messages"].Stats(); got != stats {
		t.Errorf("loaded chain stats %+v; want %+v as written", got, stats)
	}
}

func testPendingWrites(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	id := appendStep(t, s, "t", "", "", 0, 1, "a")
	w := func(task, ch, v string) checkpoint.Write {
		return checkpoint.Write{TaskID: task, Node: "node-" + task, Channel: ch, Value: []byte(v)}
	}
	steps := []struct {
		name   string
		writes []checkpoint.Write
		want   []checkpoint.Write
	}{
		{"first task", []checkpoint.Write{w("t1", "messages", `["x"]`), w("t1", "count", "1")},
			[]checkpoint.Write{w("t1", "messages", `["x"]`), w("t1", "count", "1")}},
		{"second task", []checkpoint.Write{w("t2", "messages", `["y"]`)},
			[]checkpoint.Write{w("t1", "messages", `["x"]`), w("t1", "count", "1"), w("t2", "messages", `["y"]`)}},
		{"first task again replaces its writes", []checkpoint.Write{w("t1", "messages", `["x2"]`)},
			[]checkpoint.Write{w("t2", "messages", `["y"]`), w("t1", "messages", `["x2"]`)}},
		{"nothing", nil,
			[]checkpoint.Write{w("t2", "messages", `["y"]`), w("t1", "messages", `["x2"]`)}},
	}
	for _, st := range steps {
		if err := s.PutWrites(ctx, "t", id, st.writes); err != nil {
			t.Fatalf("%s: PutWrites: %v", st.name, err)
		}
		snap := mustGet(t, s, "t", id)
		if diff := cmp.Diff(st.want, snap.Writes, cmpOpts...); diff != "" {
			t.Errorf("%s: writes mismatch (-want +got):\n%s", st.name, diff)
		}
	}
	// The writes stay with their checkpoint, not with the next one.
	next := appendStep(t, s, "t", id, id, 1, 2, "b")
	if snap := mustGet(t, s, "t", next); len(snap.Writes) != 0 {
		t.Errorf("new checkpoint has writes %v; want none", snap.Writes)
	}
	if snap := mustGet(t, s, "t", id); len(snap.Writes) != 2 {
		t.Errorf("old checkpoint has %d writes; want 2", len(snap.Writes))
	}
	if u, ok := usage(t, s, "t"); ok && (u.Writes != 2 || u.WriteBytes != int64(len(`["y"]`)+len(`["x2"]`))) {
		t.Errorf("Usage = %+v; want 2 writes of %d bytes", u, len(`["y"]`)+len(`["x2"]`))
	}
}

// testPutWithWrites checks that Put saves the writes it is given as the
// new checkpoint's pending writes, and that a Put that fails (a conflict, a
// missing parent, an invalid write) saves neither the checkpoint nor its
// writes.
func testPutWithWrites(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	base := appendStep(t, s, "t", "", "", 0, 1, "a")
	w := func(task, ch, v string) checkpoint.Write {
		return checkpoint.Write{TaskID: task, Node: "node-" + task, Channel: ch, Value: []byte(v)}
	}
	writes := []checkpoint.Write{w("1:b:1", "messages", `["done"]`), w("1:b:1", "__done__", ""), w("1:a:0", "__resume__", `{"id":"x"}`)}
	blob := []checkpoint.Blob{{Channel: "messages", Kind: checkpoint.Delta, Data: enc(t, []string{"b"})}}
	pause := &checkpoint.Checkpoint{ThreadID: "t", ParentID: base, Step: 1, Versions: map[string]uint64{"messages": 2},
		Interrupts: []checkpoint.Interrupt{{ID: "1:a:0#0", Node: "a", TaskID: "1:a:0"}}}
	if err := s.Put(ctx, base, pause, blob, slices.Clone(writes)); err != nil {
		t.Fatalf("Put with writes: %v", err)
	}
	snap := mustGet(t, s, "t", pause.ID)
	if diff := cmp.Diff(writes, snap.Writes, cmpOpts...); diff != "" {
		t.Errorf("writes saved by Put mismatch (-want +got):\n%s", diff)
	}
	if snap := mustGet(t, s, "t", base); len(snap.Writes) != 0 {
		t.Errorf("parent checkpoint got writes %v; want none", snap.Writes)
	}
	// PutWrites on the same checkpoint replaces a task's writes as usual.
	if err := s.PutWrites(ctx, "t", pause.ID, []checkpoint.Write{w("1:b:1", "messages", `["again"]`)}); err != nil {
		t.Fatal(err)
	}
	want := []checkpoint.Write{writes[2], w("1:b:1", "messages", `["again"]`)}
	if diff := cmp.Diff(want, mustGet(t, s, "t", pause.ID).Writes, cmpOpts...); diff != "" {
		t.Errorf("writes after PutWrites mismatch (-want +got):\n%s", diff)
	}

	// Failing Puts store nothing: no checkpoint, no writes.
	before, reports := usage(t, s, "t")
	failing := []struct {
		name   string
		expect string
		cp     *checkpoint.Checkpoint
		writes []checkpoint.Write
		is     error
	}{
		{"conflict", base, &checkpoint.Checkpoint{ThreadID: "t", ParentID: pause.ID, Step: 2, Versions: map[string]uint64{"messages": 3}},
			writes, checkpoint.ErrConflict},
		{"missing parent", pause.ID, &checkpoint.Checkpoint{ThreadID: "t", ParentID: "nope", Step: 2, Versions: map[string]uint64{"messages": 3}},
			writes, checkpoint.ErrNotFound},
		{"write without a task", pause.ID, &checkpoint.Checkpoint{ThreadID: "t", ParentID: pause.ID, Step: 2, Versions: map[string]uint64{"messages": 3}},
			[]checkpoint.Write{{Channel: "messages", Value: []byte("1")}}, checkpoint.ErrInvalid},
		{"write without a channel", pause.ID, &checkpoint.Checkpoint{ThreadID: "t", ParentID: pause.ID, Step: 2, Versions: map[string]uint64{"messages": 3}},
			[]checkpoint.Write{{TaskID: "x", Value: []byte("1")}}, checkpoint.ErrInvalid},
	}
	for _, tc := range failing {
		t.Run(tc.name, func(t *testing.T) {
			b := []checkpoint.Blob{{Channel: "messages", Kind: checkpoint.Delta, Data: enc(t, []string{"c"})}}
			if err := s.Put(ctx, tc.expect, tc.cp, b, tc.writes); !errors.Is(err, tc.is) {
				t.Fatalf("Put: %v; want an error wrapping %v", err, tc.is)
			}
			if after, _ := usage(t, s, "t"); reports {
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("a failed Put changed the thread's usage (-before +after):\n%s", diff)
				}
			}
		})
	}
}

func testConflict(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	base := appendStep(t, s, "t", "", "", 0, 1, "a")
	winner := appendStep(t, s, "t", base, base, 1, 2, "b")
	tests := []struct {
		name, expect, parent, actual string
	}{
		{"stale expected checkpoint", base, base, winner},
		{"new thread that exists", "", "", winner},
		{"unknown expected checkpoint", "nope", winner, winner},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cp := &checkpoint.Checkpoint{ThreadID: "t", ParentID: tc.parent, Step: 9, Versions: map[string]uint64{"messages": 9}}
			err := s.Put(ctx, tc.expect, cp, []checkpoint.Blob{{Channel: "messages", Kind: checkpoint.Full, Data: []byte(`[]`)}}, nil)
			if !errors.Is(err, checkpoint.ErrConflict) {
				t.Fatalf("got %v; want ErrConflict", err)
			}
			var ce *checkpoint.ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("got %T; want *checkpoint.ConflictError", err)
			}
			want := &checkpoint.ConflictError{ThreadID: "t", Expected: tc.expect, Actual: tc.actual}
			if diff := cmp.Diff(want, ce); diff != "" {
				t.Errorf("conflict mismatch (-want +got):\n%s", diff)
			}
		})
	}
	got, err := s.List(ctx, "t", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{winner, base}, ids(got)); diff != "" {
		t.Errorf("a conflicting Put stored something (-want +got):\n%s", diff)
	}
	if u, ok := usage(t, s, "t"); ok && u.Blobs != 2 {
		t.Errorf("Usage.Blobs = %d after conflicts; want 2", u.Blobs)
	}
}

func testFork(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	c1 := appendStep(t, s, "t", "", "", 0, 1, "a")
	c2 := appendStep(t, s, "t", c1, c1, 1, 2, "b")
	c3 := appendStep(t, s, "t", c2, c2, 2, 3, "c")

	// Fork from c1 while c3 is the latest: version 2 again, another value.
	f1 := appendStep(t, s, "t", c3, c1, 1, 2, "B")
	f2 := appendStep(t, s, "t", f1, f1, 2, 3, "C")

	want := map[string][]string{
		c1: {"a"}, c2: {"a", "b"}, c3: {"a", "b", "c"},
		f1: {"a", "B"}, f2: {"a", "B", "C"},
	}
	for id, msgs := range want {
		if diff := cmp.Diff(msgs, messages(t, mustGet(t, s, "t", id).Channels["messages"])); diff != "" {
			t.Errorf("messages at %s mismatch (-want +got):\n%s", id, diff)
		}
	}
	latest := mustGet(t, s, "t", "")
	if latest.ID != f2 || latest.ParentID != f1 {
		t.Errorf("latest = %s (parent %s); want %s (parent %s)", latest.ID, latest.ParentID, f2, f1)
	}
	got, err := s.List(ctx, "t", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{f2, f1, c3, c2, c1}, ids(got)); diff != "" {
		t.Errorf("history mismatch (-want +got):\n%s", diff)
	}
	// Forking from the old branch's tip again must expect the new latest.
	err = s.Put(ctx, c3, &checkpoint.Checkpoint{ThreadID: "t", ParentID: c3, Step: 3, Versions: map[string]uint64{"messages": 4}},
		[]checkpoint.Blob{{Channel: "messages", Kind: checkpoint.Delta, Data: enc(t, []string{"d"})}}, nil)
	if !errors.Is(err, checkpoint.ErrConflict) {
		t.Errorf("Put expecting the old tip: got %v; want ErrConflict", err)
	}
}

func testDeleteThread(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	a1 := appendStep(t, s, "a", "", "", 0, 1, "x")
	a2 := appendStep(t, s, "a", a1, a1, 1, 2, "y")
	if err := s.PutWrites(ctx, "a", a2, []checkpoint.Write{{TaskID: "t", Channel: "messages", Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	b1 := appendStep(t, s, "b", "", "", 0, 1, "z")
	// Threads whose ids start with "a" and a separator (a subgraph's
	// thread is its parent's, "|", and its task): deleting "a" deletes
	// none of them, as a deletion by key prefix would.
	var prefixed []string
	for _, id := range []string{"a|b", "a|1:node:0", "a:b", "a/b", "a%", "a_"} {
		prefixed = append(prefixed, id, appendStep(t, s, id, "", "", 0, 1, "kept"))
	}

	if err := s.DeleteThread(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(prefixed); i += 2 {
		if got, err := s.Get(ctx, prefixed[i], ""); err != nil || got.ID != prefixed[i+1] {
			t.Errorf("thread %q after deleting thread a: %v; want its checkpoint %s kept", prefixed[i], err, prefixed[i+1])
		}
	}
	if _, err := s.Get(ctx, "a", ""); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Get after delete: got %v; want ErrNotFound", err)
	}
	if u, ok := usage(t, s, "a"); ok && u != (checkpoint.Usage{}) {
		t.Errorf("Usage after delete = %+v; want zero", u)
	}
	if got := mustGet(t, s, "b", ""); got.ID != b1 {
		t.Errorf("other thread's latest = %s; want %s", got.ID, b1)
	}
	if err := s.DeleteThread(ctx, "a"); err != nil {
		t.Errorf("deleting a deleted thread: %v", err)
	}
	// A writer still holding the deleted thread's latest gets a conflict.
	err := s.Put(ctx, a2, &checkpoint.Checkpoint{ThreadID: "a", ParentID: a2, Versions: map[string]uint64{"messages": 3}},
		[]checkpoint.Blob{{Channel: "messages", Kind: checkpoint.Full, Data: []byte(`[]`)}}, nil)
	var ce *checkpoint.ConflictError
	if !errors.As(err, &ce) || ce.Actual != "" {
		t.Errorf("Put on a deleted thread: got %v; want a conflict with no actual checkpoint", err)
	}
	// The thread can start again.
	appendStep(t, s, "a", "", "", 0, 1, "again")
	if got := messages(t, mustGet(t, s, "a", "").Channels["messages"]); !slices.Equal(got, []string{"again"}) {
		t.Errorf("restarted thread holds %v; want [again]", got)
	}
}

func testKeepLatest(t *testing.T, s checkpoint.Saver) {
	pr := pruner(t, s)
	ctx := context.Background()
	// profile: written once; messages: a delta every step; scratch: a full
	// value every step.
	const steps, keep = 20, 5
	var ckpts []string
	prev := ""
	var msgs []string
	for i := 1; i <= steps; i++ {
		msg := fmt.Sprintf("m%d", i)
		msgs = append(msgs, msg)
		versions := map[string]uint64{"profile": 1, "messages": uint64(i), "scratch": uint64(i)}
		blobs := []checkpoint.Blob{
			{Channel: "messages", Kind: checkpoint.Delta, Data: enc(t, []string{msg})},
			{Channel: "scratch", Kind: checkpoint.Full, Data: enc(t, i)},
		}
		if i == 1 {
			blobs = append(blobs, checkpoint.Blob{Channel: "profile", Kind: checkpoint.Full, Data: enc(t, "ada")})
		}
		prev = mustPut(t, s, prev, &checkpoint.Checkpoint{ThreadID: "t", ParentID: prev, Step: i, Versions: versions}, blobs...)
		if i == steps-1 {
			if err := s.PutWrites(ctx, "t", prev, []checkpoint.Write{{TaskID: "x", Channel: "scratch", Value: []byte("1")}}); err != nil {
				t.Fatal(err)
			}
		}
		ckpts = append(ckpts, prev)
	}
	other := appendStep(t, s, "other", "", "", 0, 1, "o")
	other = appendStep(t, s, "other", other, other, 1, 2, "p")

	p, err := pr.Prune(ctx, checkpoint.Retention{ThreadID: "t", KeepLatest: keep})
	if err != nil {
		t.Fatal(err)
	}
	// Kept: profile@1, all 20 message deltas (the kept chains reach back to
	// step 1), scratch@16..20.
	if diff := cmp.Diff(checkpoint.Pruned{Checkpoints: steps - keep, Blobs: steps - keep}, p); diff != "" {
		t.Errorf("Pruned mismatch (-want +got):\n%s", diff)
	}
	got, err := s.List(ctx, "t", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := slices.Clone(ckpts[steps-keep:])
	slices.Reverse(wantIDs)
	if diff := cmp.Diff(wantIDs, ids(got)); diff != "" {
		t.Errorf("kept checkpoints mismatch (-want +got):\n%s", diff)
	}
	for i := steps - keep; i < steps; i++ {
		snap := mustGet(t, s, "t", ckpts[i])
		if diff := cmp.Diff(msgs[:i+1], messages(t, snap.Channels["messages"])); diff != "" {
			t.Errorf("messages at kept step %d mismatch (-want +got):\n%s", i+1, diff)
		}
		if n, _ := checkpoint.Decode[int](checkpoint.JSON, snap.Channels["scratch"].Base); n != i+1 {
			t.Errorf("scratch at kept step %d = %d", i+1, n)
		}
		if name, _ := checkpoint.Decode[string](checkpoint.JSON, snap.Channels["profile"].Base); name != "ada" {
			t.Errorf("profile at kept step %d = %q; want ada", i+1, name)
		}
	}
	if snap := mustGet(t, s, "t", ckpts[steps-2]); len(snap.Writes) != 1 {
		t.Errorf("kept checkpoint lost its pending writes: %v", snap.Writes)
	}
	for _, id := range ckpts[:steps-keep] {
		if _, err := s.Get(ctx, "t", id); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("Get pruned %s: got %v; want ErrNotFound", id, err)
		}
	}
	if u, ok := usage(t, s, "t"); ok && (u.Checkpoints != keep || u.Blobs != 1+steps+keep || u.Writes != 1) {
		t.Errorf("Usage after prune = %+v; want %d checkpoints, %d blobs, 1 write", u, keep, 1+steps+keep)
	}
	if got := mustGet(t, s, "other", ""); got.ID != other {
		t.Errorf("pruning one thread touched another")
	}
	// The thread goes on from its latest checkpoint.
	last := appendStep(t, s, "t", ckpts[steps-1], ckpts[steps-1], steps+1, steps+1, "after")
	if got := messages(t, mustGet(t, s, "t", last).Channels["messages"]); len(got) != steps+1 {
		t.Errorf("after prune and put: %d messages; want %d", len(got), steps+1)
	}

	// Pruning every thread, keeping one checkpoint each.
	p, err = pr.Prune(ctx, checkpoint.Retention{KeepLatest: 1})
	if err != nil {
		t.Fatal(err)
	}
	// t: the kept checkpoints and the one put since, less one; other: one.
	if p.Checkpoints != keep+1 {
		t.Errorf("Prune(KeepLatest 1) deleted %d checkpoints; want %d", p.Checkpoints, keep+1)
	}
	for thread, n := range map[string]int{"t": steps + 1, "other": 2} {
		if got := messages(t, mustGet(t, s, thread, "").Channels["messages"]); len(got) != n {
			t.Errorf("thread %s after keeping 1: %d messages; want %d", thread, len(got), n)
		}
	}
}

func testIdleTTL(t *testing.T, s checkpoint.Saver) {
	pr := pruner(t, s)
	ctx := context.Background()
	appendStep(t, s, "old", "", "", 0, 1, "x")
	written := appendStep(t, s, "old-with-writes", "", "", 0, 1, "x")
	time.Sleep(5 * time.Millisecond)
	mid := time.Now()
	time.Sleep(5 * time.Millisecond)
	appendStep(t, s, "new", "", "", 0, 1, "y")
	if err := s.PutWrites(ctx, "old-with-writes", written, []checkpoint.Write{{TaskID: "t", Channel: "messages", Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()

	// Idle for less than the TTL: nothing goes.
	p, err := pr.Prune(ctx, checkpoint.Retention{MaxIdle: time.Hour, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if p != (checkpoint.Pruned{}) {
		t.Errorf("Prune with a long TTL deleted %+v", p)
	}
	// Only "old" was last written before mid.
	p, err = pr.Prune(ctx, checkpoint.Retention{MaxIdle: now.Sub(mid), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(checkpoint.Pruned{Threads: 1, Checkpoints: 1, Blobs: 1}, p); diff != "" {
		t.Errorf("Pruned mismatch (-want +got):\n%s", diff)
	}
	if _, err := s.Get(ctx, "old", ""); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("idle thread survived: %v", err)
	}
	for _, thread := range []string{"new", "old-with-writes"} {
		if _, err := s.Get(ctx, thread, ""); err != nil {
			t.Errorf("active thread %s: %v", thread, err)
		}
	}
	// Scoped to one thread.
	p, err = pr.Prune(ctx, checkpoint.Retention{ThreadID: "new", MaxIdle: time.Nanosecond, Now: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Threads != 1 {
		t.Errorf("scoped Prune deleted %d threads; want 1", p.Threads)
	}
	if _, err := s.Get(ctx, "old-with-writes", ""); err != nil {
		t.Errorf("scoped Prune deleted another thread: %v", err)
	}
}

func testConcurrentWriters(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	base := mustPut(t, s, "", &checkpoint.Checkpoint{ThreadID: "t", Versions: map[string]uint64{"n": 1}},
		checkpoint.Blob{Channel: "n", Kind: checkpoint.Full, Data: enc(t, 0)})

	// Many writers expecting the same checkpoint: exactly one wins.
	const writers = 16
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		losers  []*checkpoint.ConflictError
		others  []error
	)
	for i := range writers {
		wg.Go(func() {
			cp := &checkpoint.Checkpoint{ThreadID: "t", ParentID: base, Step: 1, Versions: map[string]uint64{"n": 2}}
			err := s.Put(ctx, base, cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: enc(t, i)}}, nil)
			mu.Lock()
			defer mu.Unlock()
			var ce *checkpoint.ConflictError
			switch {
			case err == nil:
				winners = append(winners, cp.ID)
			case errors.As(err, &ce):
				losers = append(losers, ce)
			default:
				others = append(others, err)
			}
		})
	}
	wg.Wait()
	if len(others) > 0 {
		t.Fatalf("unexpected errors: %v", others)
	}
	if len(winners) != 1 {
		t.Fatalf("%d writers won; want exactly 1", len(winners))
	}
	for _, ce := range losers {
		if ce.Expected != base || ce.Actual != winners[0] {
			t.Errorf("conflict %+v; want expected %s, actual %s", ce, base, winners[0])
		}
	}

	// Writers that retry on conflict: no update is lost and history is a
	// single line.
	const rounds = 5
	const retriers = 6
	var errs []error
	for range retriers {
		wg.Go(func() {
			for done := 0; done < rounds; {
				snap, err := s.Get(ctx, "t", "")
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				n, _ := checkpoint.Decode[int](checkpoint.JSON, snap.Channels["n"].Base)
				v := snap.Versions["n"] + 1
				cp := &checkpoint.Checkpoint{ThreadID: "t", ParentID: snap.ID, Step: snap.Step + 1, Versions: map[string]uint64{"n": v}}
				err = s.Put(ctx, snap.ID, cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: enc(t, n+1)}}, nil)
				switch {
				case err == nil:
					done++
				case errors.Is(err, checkpoint.ErrConflict):
				default:
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	history, err := s.List(ctx, "t", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 + rounds*retriers; len(history) != want {
		t.Fatalf("history has %d checkpoints; want %d", len(history), want)
	}
	for i := 0; i+1 < len(history); i++ {
		if history[i].ParentID != history[i+1].ID {
			t.Fatalf("history forks at %s: parent %s, previous checkpoint %s", history[i].ID, history[i].ParentID, history[i+1].ID)
		}
	}
	last := mustGet(t, s, "t", "")
	winnerValue, _ := checkpoint.Decode[int](checkpoint.JSON, mustGet(t, s, "t", winners[0]).Channels["n"].Base)
	if n, _ := checkpoint.Decode[int](checkpoint.JSON, last.Channels["n"].Base); n != winnerValue+rounds*retriers {
		t.Errorf("counter = %d; want %d: an update was lost", n, winnerValue+rounds*retriers)
	}
}

func testCancelled(t *testing.T, s checkpoint.Saver) {
	id := appendStep(t, s, "t", "", "", 0, 1, "a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cp := &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"messages": 2}}
	blob := []checkpoint.Blob{{Channel: "messages", Kind: checkpoint.Delta, Data: []byte(`["b"]`)}}
	calls := []struct {
		name string
		call func() error
	}{
		{"Put", func() error { return s.Put(ctx, id, cp, blob, nil) }},
		{"PutWrites", func() error {
			return s.PutWrites(ctx, "t", id, []checkpoint.Write{{TaskID: "x", Channel: "messages"}})
		}},
		{"Get", func() error { _, err := s.Get(ctx, "t", ""); return err }},
		{"List", func() error { _, err := s.List(ctx, "t", checkpoint.ListOptions{}); return err }},
		{"DeleteThread", func() error { return s.DeleteThread(ctx, "t") }},
	}
	if p, ok := s.(checkpoint.Pruner); ok {
		calls = append(calls, struct {
			name string
			call func() error
		}{"Prune", func() error { _, err := p.Prune(ctx, checkpoint.Retention{MaxIdle: time.Nanosecond}); return err }})
	}
	if u, ok := s.(checkpoint.UsageReporter); ok {
		calls = append(calls, struct {
			name string
			call func() error
		}{"Usage", func() error { _, err := u.Usage(ctx, "t"); return err }})
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, context.Canceled) {
				t.Errorf("got %v; want context.Canceled", err)
			}
		})
	}
	snap := mustGet(t, s, "t", "")
	if snap.ID != id || len(snap.Writes) != 0 {
		t.Errorf("cancelled calls changed the thread: latest %s with %d writes", snap.ID, len(snap.Writes))
	}
}

// testCopyAfterPrune copies a thread that Prune shortened to its latest
// checkpoint, whose channel is then a full value plus deltas: the copy
// holds the same state and pending writes, goes on by itself, and a copy
// to a thread that has checkpoints is a conflict.
func testCopyAfterPrune(t *testing.T, s checkpoint.Saver) {
	pr := pruner(t, s)
	ctx := context.Background()
	prev := ""
	for i := 1; i <= 4; i++ {
		kind := checkpoint.Delta
		if i == 2 {
			kind = checkpoint.Full
		}
		data := enc(t, []string{fmt.Sprintf("m%d", i)})
		if kind == checkpoint.Full {
			data = enc(t, []string{"m1", "m2"})
		}
		prev = mustPut(t, s, prev, &checkpoint.Checkpoint{ThreadID: "from", ParentID: prev, Step: i, Versions: map[string]uint64{"messages": uint64(i)}},
			checkpoint.Blob{Channel: "messages", Kind: kind, Data: data})
	}
	if err := s.PutWrites(ctx, "from", prev, []checkpoint.Write{{TaskID: "x", Node: "n", Channel: "messages", Value: []byte(`["w"]`)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pr.Prune(ctx, checkpoint.Retention{ThreadID: "from", KeepLatest: 1}); err != nil {
		t.Fatal(err)
	}
	n, err := checkpoint.CopyThread(ctx, s, "from", "to")
	if err != nil || n != 1 {
		t.Fatalf("CopyThread after Prune = %d, %v; want 1, nil", n, err)
	}
	want, got := mustGet(t, s, "from", ""), mustGet(t, s, "to", "")
	if got.ThreadID != "to" {
		t.Errorf("copy's ThreadID = %q; want to", got.ThreadID)
	}
	got.ThreadID = want.ThreadID
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("copy mismatch (-from +to):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"m1", "m2", "m3", "m4"}, messages(t, got.Channels["messages"])); diff != "" {
		t.Errorf("copy's messages mismatch (-want +got):\n%s", diff)
	}
	next := mustPut(t, s, prev, &checkpoint.Checkpoint{ThreadID: "to", ParentID: prev, Step: 5, Versions: map[string]uint64{"messages": 5}},
		checkpoint.Blob{Channel: "messages", Kind: checkpoint.Delta, Data: enc(t, []string{"m5"})})
	if diff := cmp.Diff([]string{"m1", "m2", "m3", "m4", "m5"}, messages(t, mustGet(t, s, "to", next).Channels["messages"])); diff != "" {
		t.Errorf("messages after a step on the copy mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"m1", "m2", "m3", "m4"}, messages(t, mustGet(t, s, "from", "").Channels["messages"])); diff != "" {
		t.Errorf("the original changed with its copy (-want +got):\n%s", diff)
	}
	if _, err := checkpoint.CopyThread(ctx, s, "from", "to"); !errors.Is(err, checkpoint.ErrConflict) {
		t.Errorf("CopyThread to a thread with checkpoints: %v; want ErrConflict", err)
	}
	if n, err := checkpoint.CopyThread(ctx, s, "none", "to2"); err != nil || n != 0 {
		t.Errorf("CopyThread of a thread without checkpoints = %d, %v; want 0, nil", n, err)
	}
}

// testPatchMetadata checks checkpoint.PatchMetadata on a Saver that is a
// MetadataPatcher: the pairs are merged into the one checkpoint's
// metadata, which List filters on, and a copy of the thread made before
// keeps its own.
func testPatchMetadata(t *testing.T, s checkpoint.Saver) {
	if _, ok := s.(checkpoint.MetadataPatcher); !ok {
		t.Skip("not a checkpoint.MetadataPatcher")
	}
	ctx := context.Background()
	first := mustPut(t, s, "", &checkpoint.Checkpoint{ThreadID: "p", Step: 1, Metadata: map[string]string{"source": "input", "keep": "a"}})
	second := mustPut(t, s, first, &checkpoint.Checkpoint{ThreadID: "p", ParentID: first, Step: 2, Metadata: map[string]string{"source": "loop"}})
	if _, err := checkpoint.CopyThread(ctx, s, "p", "p-copy"); err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.PatchMetadata(ctx, s, "p", first, map[string]string{"keep": "b", "label": "x"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"source": "input", "keep": "b", "label": "x"}, mustGet(t, s, "p", first).Metadata); diff != "" {
		t.Errorf("patched metadata mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"source": "loop"}, mustGet(t, s, "p", second).Metadata); diff != "" {
		t.Errorf("another checkpoint's metadata changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"source": "input", "keep": "a"}, mustGet(t, s, "p-copy", first).Metadata); diff != "" {
		t.Errorf("the copy's metadata changed with the original's (-want +got):\n%s", diff)
	}
	got, err := s.List(ctx, "p", checkpoint.ListOptions{Metadata: map[string]string{"label": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{first}, ids(got)); diff != "" {
		t.Errorf("List by the patched label mismatch (-want +got):\n%s", diff)
	}
	if err := checkpoint.PatchMetadata(ctx, s, "p", "missing", map[string]string{"a": "b"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("PatchMetadata of a missing checkpoint: %v; want ErrNotFound", err)
	}
	if err := checkpoint.PatchMetadata(ctx, s, "nothread", first, map[string]string{"a": "b"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("PatchMetadata on a missing thread: %v; want ErrNotFound", err)
	}
}
