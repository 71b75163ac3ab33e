package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestDeleteLegacyThreadIDs: a thread an earlier release stored under an
// ID longer than checkpoint.MaxIDLen, or not valid UTF-8, can still be
// deleted with DeleteThread and pruned with Retention.ThreadID, which take
// any thread ID; they answered ErrInvalid, leaving such a thread for good.
func TestDeleteLegacyThreadIDs(t *testing.T) {
	ctx := context.Background()
	s := openCorruptible(t, filepath.Join(t.TempDir(), "checkpoints.db"))
	legacy := []string{strings.Repeat("x", checkpoint.MaxIDLen+1), strings.Repeat("y", checkpoint.MaxIDLen+1), "old\xff"}
	for i, id := range legacy {
		tmp := "tmp" + string(rune('a'+i))
		cp := &checkpoint.Checkpoint{ThreadID: tmp, Versions: map[string]uint64{"a": 1}}
		if err := s.Put(ctx, "", cp, []checkpoint.Blob{{Channel: "a", Kind: checkpoint.Full, Data: []byte("1")}}, nil); err != nil {
			t.Fatal(err)
		}
		// As an earlier release, without the limit, stored it.
		for _, table := range []string{"agentgraph_threads", "agentgraph_checkpoints", "agentgraph_blobs", "agentgraph_writes"} {
			if _, err := s.db.ExecContext(ctx, `UPDATE `+table+` SET thread_id = ? WHERE thread_id = ?`, id, tmp); err != nil {
				t.Fatal(err)
			}
		}
	}
	rows := func(id string) int {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM agentgraph_checkpoints WHERE thread_id = ?`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, id := range legacy {
		if rows(id) != 1 {
			t.Fatalf("thread %.10q not stored as a legacy thread", id)
		}
	}
	if err := s.DeleteThread(ctx, legacy[0]); err != nil || rows(legacy[0]) != 0 {
		t.Errorf("DeleteThread of a legacy thread of %d bytes = %v, %d checkpoints left; want it deleted", len(legacy[0]), err, rows(legacy[0]))
	}
	if err := s.DeleteThread(ctx, legacy[2]); err != nil || rows(legacy[2]) != 0 {
		t.Errorf("DeleteThread of a legacy thread %q = %v, %d checkpoints left; want it deleted", legacy[2], err, rows(legacy[2]))
	}
	p, err := s.Prune(ctx, checkpoint.Retention{ThreadID: legacy[1], MaxIdle: time.Nanosecond, Now: time.Now().Add(time.Hour)})
	if err != nil || p.Threads != 1 || rows(legacy[1]) != 0 {
		t.Errorf("Prune of a legacy thread of %d bytes = %+v, %v, %d checkpoints left; want it pruned", len(legacy[1]), p, err, rows(legacy[1]))
	}
}
