package checkpointtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// longID returns an ID of n bytes that does not compress, as a database
// index would see a real one.
func longID(prefix string, n int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; b.Len() < n; i++ {
		sum := sha256.Sum256([]byte(prefix + strconv.Itoa(i)))
		b.WriteString(hex.EncodeToString(sum[:]))
	}
	return b.String()[:n]
}

// testIDs checks that every Saver takes the same IDs and names: IDs,
// channels and nodes of checkpoint.MaxIDLen bytes round trip, and an ID or
// name that is not valid UTF-8, holds a NUL byte or is longer is refused
// with checkpoint.ErrInvalid naming the field, by writes and reads alike,
// rather than accepted by one backend and refused by the database of
// another. DeleteThread and Prune take any thread ID and delete nothing
// for one no Put accepts.
func testIDs(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	full := func(ch string) checkpoint.Blob {
		return checkpoint.Blob{Channel: ch, Kind: checkpoint.Full, Data: []byte("1")}
	}

	t.Run("longest", func(t *testing.T) {
		thread, ch, task := longID("t", checkpoint.MaxIDLen), longID("c", checkpoint.MaxIDLen), longID("k", checkpoint.MaxIDLen)
		cp := &checkpoint.Checkpoint{ThreadID: thread, ID: longID("i", checkpoint.MaxIDLen), Versions: map[string]uint64{ch: 1},
			Next: []checkpoint.Task{{ID: task, Node: longID("n", checkpoint.MaxIDLen)}}, Metadata: map[string]string{"k": "é"}}
		id := mustPut(t, s, "", cp, full(ch))
		if err := s.PutWrites(ctx, thread, id, []checkpoint.Write{{TaskID: task, Node: "n", Channel: ch, Value: []byte("2")}}); err != nil {
			t.Fatalf("PutWrites with IDs of MaxIDLen bytes: %v", err)
		}
		snap := mustGet(t, s, thread, id)
		if snap.ThreadID != thread || snap.ID != id || len(snap.Next) != 1 || snap.Next[0].ID != task || len(snap.Writes) != 1 || snap.Writes[0].TaskID != task {
			t.Errorf("Get of IDs of MaxIDLen bytes = thread %.8q id %.8q next %v writes %v; want them as put", snap.ThreadID, snap.ID, len(snap.Next), len(snap.Writes))
		}
		if _, ok := snap.Channels[ch]; !ok {
			t.Errorf("Get lost channel of MaxIDLen bytes")
		}
	})

	bad := []struct{ name, value, says string }{
		{"NUL", "a\x00b", "NUL"},
		{"invalid UTF-8", "\xff\xfe", "UTF-8"},
		{"too long", longID("x", checkpoint.MaxIDLen+1), strconv.Itoa(checkpoint.MaxIDLen + 1)},
	}
	id := mustPut(t, s, "", &checkpoint.Checkpoint{ThreadID: "t", Versions: map[string]uint64{"a": 1}}, full("a"))
	check := func(t *testing.T, what string, err error, field, says string) {
		t.Helper()
		if !errors.Is(err, checkpoint.ErrInvalid) {
			t.Fatalf("%s: got %v; want an error wrapping ErrInvalid", what, err)
		}
		msg := err.Error()
		for _, want := range []string{field, says, strconv.Itoa(checkpoint.MaxIDLen)} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error %q does not say %q", what, msg, want)
			}
		}
		if len(msg) > 1000 {
			t.Errorf("%s: error of %d bytes; want the ID clipped", what, len(msg))
		}
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			v := b.value
			puts := []struct {
				field  string
				expect string
				cp     *checkpoint.Checkpoint
				blobs  []checkpoint.Blob
				writes []checkpoint.Write
			}{
				{"Checkpoint.ThreadID", "", &checkpoint.Checkpoint{ThreadID: v, Versions: map[string]uint64{"a": 1}}, []checkpoint.Blob{full("a")}, nil},
				{"Checkpoint.ID", id, &checkpoint.Checkpoint{ThreadID: "t", ID: v, ParentID: id, Versions: map[string]uint64{"a": 1}}, nil, nil},
				{"Checkpoint.ParentID", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: v, Versions: map[string]uint64{"a": 1}}, nil, nil},
				{"expected", v, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1}}, nil, nil},
				{"Checkpoint.Versions", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1, v: 1}}, []checkpoint.Blob{full(v)}, nil},
				{"Checkpoint.Ran[0]", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1}, Ran: []string{v}}, nil, nil},
				{"Checkpoint.Next[0].ID", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1}, Next: []checkpoint.Task{{ID: v, Node: "n"}}}, nil, nil},
				{"Checkpoint.Next[0].Node", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1}, Next: []checkpoint.Task{{ID: "k", Node: v}}}, nil, nil},
				{"Checkpoint.Interrupts[0].TaskID", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1}, Interrupts: []checkpoint.Interrupt{{ID: "i", Node: "n", TaskID: v}}}, nil, nil},
				{"writes[0].TaskID", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1}}, nil, []checkpoint.Write{{TaskID: v, Channel: "a"}}},
				{"writes[0].Channel", id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1}}, nil, []checkpoint.Write{{TaskID: "k", Channel: v}}},
			}
			for _, p := range puts {
				check(t, "Put with a bad "+p.field, s.Put(ctx, p.expect, p.cp, p.blobs, p.writes), p.field, b.says)
			}
			check(t, "PutWrites with a bad thread", s.PutWrites(ctx, v, id, []checkpoint.Write{{TaskID: "k", Channel: "a"}}), "thread ID", b.says)
			check(t, "PutWrites with a bad checkpoint", s.PutWrites(ctx, "t", v, []checkpoint.Write{{TaskID: "k", Channel: "a"}}), "checkpoint ID", b.says)
			check(t, "PutWrites with a bad node", s.PutWrites(ctx, "t", id, []checkpoint.Write{{TaskID: "k", Node: v, Channel: "a"}}), "writes[0].Node", b.says)
			_, err := s.Get(ctx, v, "")
			check(t, "Get of a bad thread", err, "thread ID", b.says)
			_, err = s.Get(ctx, "t", v)
			check(t, "Get of a bad checkpoint", err, "checkpoint ID", b.says)
			_, err = s.List(ctx, v, checkpoint.ListOptions{})
			check(t, "List of a bad thread", err, "thread ID", b.says)
			_, err = s.List(ctx, "t", checkpoint.ListOptions{Before: v})
			check(t, "List before a bad checkpoint", err, "ListOptions.Before", b.says)
			if sl, ok := s.(checkpoint.SnapshotLister); ok {
				_, err = sl.ListSnapshots(ctx, v, checkpoint.ListOptions{})
				check(t, "ListSnapshots of a bad thread", err, "thread ID", b.says)
				_, err = sl.ListSnapshots(ctx, "t", checkpoint.ListOptions{Before: v})
				check(t, "ListSnapshots before a bad checkpoint", err, "ListOptions.Before", b.says)
			}
			// DeleteThread and Prune take any thread ID, so that a thread
			// stored by a release without the rule can be deleted: one no
			// Put accepts names no thread, and nothing is deleted.
			if err := s.DeleteThread(ctx, v); err != nil {
				t.Errorf("DeleteThread of a thread no Put accepts: %v; want nil (nothing to delete)", err)
			}
			if p, ok := s.(checkpoint.Pruner); ok {
				got, err := p.Prune(ctx, checkpoint.Retention{ThreadID: v, KeepLatest: 1, MaxIdle: time.Nanosecond})
				if err != nil || got != (checkpoint.Pruned{}) {
					t.Errorf("Prune of a thread no Put accepts = %+v, %v; want nothing pruned and nil", got, err)
				}
			}
			if _, err := checkpoint.ThreadUsage(ctx, s, v); !errors.Is(err, errors.ErrUnsupported) {
				check(t, "ThreadUsage of a bad thread", err, "thread ID", b.says)
			}
			if _, err := checkpoint.CopyThread(ctx, s, "t", v); !errors.Is(err, errors.ErrUnsupported) {
				check(t, "CopyThread to a bad thread", err, "to", b.says)
			}
			if err := checkpoint.PatchMetadata(ctx, s, v, id, map[string]string{"k": "v"}); !errors.Is(err, errors.ErrUnsupported) {
				check(t, "PatchMetadata of a bad thread", err, "thread ID", b.says)
			}
		})
	}

	t.Run("metadata", func(t *testing.T) {
		for _, v := range []string{"a\x00b", "\xff\xfe"} {
			err := s.Put(ctx, id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1}, Metadata: map[string]string{"k": v}}, nil, nil)
			if !errors.Is(err, checkpoint.ErrInvalid) || !strings.Contains(err.Error(), "Checkpoint.Metadata") {
				t.Errorf("Put with metadata %q: got %v; want ErrInvalid naming Checkpoint.Metadata", v, err)
			}
			err = s.Put(ctx, id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1}, Metadata: map[string]string{v: "v"}}, nil, nil)
			if !errors.Is(err, checkpoint.ErrInvalid) {
				t.Errorf("Put with metadata key %q: got %v; want ErrInvalid", v, err)
			}
			if _, err := s.List(ctx, "t", checkpoint.ListOptions{Metadata: map[string]string{"k": v}}); !errors.Is(err, checkpoint.ErrInvalid) {
				t.Errorf("List filtering on %q: got %v; want ErrInvalid", v, err)
			}
			if sl, ok := s.(checkpoint.SnapshotLister); ok {
				if _, err := sl.ListSnapshots(ctx, "t", checkpoint.ListOptions{Metadata: map[string]string{"k": v}}); !errors.Is(err, checkpoint.ErrInvalid) {
					t.Errorf("ListSnapshots filtering on %q: got %v; want ErrInvalid", v, err)
				}
			}
			if err := checkpoint.PatchMetadata(ctx, s, "t", id, map[string]string{"k": v}); !errors.Is(err, checkpoint.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("PatchMetadata with %q: got %v; want ErrInvalid", v, err)
			}
		}
		// A long value is fine: only IDs and names are bounded.
		long := longID("m", 4*checkpoint.MaxIDLen)
		mustPut(t, s, id, &checkpoint.Checkpoint{ThreadID: "t", ParentID: id, Versions: map[string]uint64{"a": 1}, Metadata: map[string]string{"k": long}})
	})

	// The empty thread is still one that has no checkpoint.
	if _, err := s.Get(ctx, "", ""); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Get of the empty thread: got %v; want ErrNotFound", err)
	}
	if u, ok := usage(t, s, "t"); ok && u.Checkpoints != 2 {
		t.Errorf("after refused puts Usage = %+v; want 2 checkpoints", u)
	}
}
