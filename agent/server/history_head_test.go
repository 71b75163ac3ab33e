package server_test

import (
	"testing"
)

// TestHistoryFromHead: after a rollback, a thread's history starts at the
// checkpoint the rollback returned the thread to (its head), not at the
// rolled-back run's later checkpoints, through GET and POST, with a
// metadata filter and a limit of one; a page before the head goes on
// below it.
func TestHistoryFromHead(t *testing.T) {
	type entry struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
		Next []string `json:"next"`
	}
	ids := func(h []entry) []string {
		var out []string
		for _, e := range h {
			out = append(out, e.Checkpoint.CheckpointID)
		}
		return out
	}
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, open(t))
			tid, paused := pausedHead(t, ts)
			var got []entry
			if code := do(t, "GET", ts.URL+"/threads/"+tid+"/history", nil, nil, &got); code != 200 {
				t.Fatalf("GET history: %d", code)
			}
			if len(got) == 0 || got[0].Checkpoint.CheckpointID != paused || len(got[0].Next) != 1 || got[0].Next[0] != "ask" {
				t.Fatalf("GET history after the rollback: %v; want it to start at the head %s (next [ask])", ids(got), paused)
			}
			whole := ids(got)
			got = nil
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/history", map[string]any{"limit": 1}, nil, &got); code != 200 {
				t.Fatalf("POST history: %d", code)
			}
			if len(got) != 1 || got[0].Checkpoint.CheckpointID != paused {
				t.Errorf("POST history limit 1 after the rollback: %v; want [%s]", ids(got), paused)
			}
			got = nil
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/history", map[string]any{"metadata": map[string]any{"step": 1}}, nil, &got); code != 200 {
				t.Fatalf("POST history with step: %d", code)
			}
			for _, e := range got {
				for _, id := range whole {
					if id == e.Checkpoint.CheckpointID {
						goto found
					}
				}
				t.Errorf("POST history with step 1 after the rollback lists %s, which is not in the head's history %v", e.Checkpoint.CheckpointID, whole)
			found:
			}
			got = nil
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/history", map[string]any{"before": paused}, nil, &got); code != 200 {
				t.Fatalf("POST history before the head: %d", code)
			}
			if want := whole[1:]; !equalStrings(ids(got), want) {
				t.Errorf("history before the head: %v; want %v", ids(got), want)
			}
		})
	}
}
