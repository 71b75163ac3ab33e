package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCloseBetweenCheckAndRegistration parks a run-creating request
// after newRun's check that the server is not closed, closes the server,
// then lets the request go on: it is answered 503 and its run is removed,
// its thread idle as before it (issue #21 C2), for /runs/wait and /runs/stream on
// a thread and for a stateless /runs/wait. The run was created pending
// and kick, seeing the server closed, started nothing: the request
// waited on it for ever.
func TestCloseBetweenCheckAndRegistration(t *testing.T) {
	for _, path := range []string{"/runs/wait", "/runs/stream", "stateless /runs/wait"} {
		t.Run(path, func(t *testing.T) {
			s, hs := incServer(t, Config{})
			var tid string
			target := "/runs/wait"
			if path != "stateless /runs/wait" {
				code, body := call(t.Context(), t, hs, "POST", "/threads", `{}`)
				var th struct {
					ThreadID string `json:"thread_id"`
				}
				if code != 200 || json.Unmarshal([]byte(body), &th) != nil {
					t.Fatalf("POST /threads: %d %s", code, body)
				}
				tid, target = th.ThreadID, "/threads/"+th.ThreadID+path
			}
			parked, release := make(chan struct{}), make(chan struct{})
			// A failure before the release still frees the parked
			// handler, so that the server's clean-up can close it.
			free := sync.OnceFunc(func() { close(release) })
			t.Cleanup(free)
			s.creating = func() { close(parked); <-release }
			type answer struct {
				code int
				body string
			}
			done := make(chan answer, 1)
			// The deadline only ends a request that would wait for ever,
			// so that the test fails instead of hanging.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			go func() {
				code, body := call(ctx, t, hs, "POST", target, `{"assistant_id":"inc","input":{"n":1}}`)
				done <- answer{code, body}
			}()
			<-parked
			if err := s.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			free()
			a := <-done
			if a.code != http.StatusServiceUnavailable {
				t.Fatalf("%s parked across Close: %d %q; want 503 (it waited on a run this server does not start)", path, a.code, a.body)
			}
			if tid == "" {
				return
			}
			code, body := call(t.Context(), t, hs, "GET", "/threads/"+tid+"/runs", "")
			var runs []struct {
				Status string `json:"status"`
			}
			if code != 200 || json.Unmarshal([]byte(body), &runs) != nil {
				t.Fatalf("GET runs: %d %s", code, body)
			}
			if len(runs) != 0 {
				t.Errorf("runs after the 503: %s; want none (the refused run is removed, as if never created)", body)
			}
			code, body = call(t.Context(), t, hs, "GET", "/threads/"+tid, "")
			var th struct {
				Status string `json:"status"`
			}
			if code != 200 || json.Unmarshal([]byte(body), &th) != nil || th.Status != ThreadIdle {
				t.Errorf("thread after the 503: %d %s; want idle", code, body)
			}
		})
	}
}

// TestUnmakeRunClaimedElsewhere: a run refused in Close's window that
// another instance claimed before unmakeRun took the lock is reported not
// removed, with no error, and is left in the store; a pending unclaimed
// one is removed. Before, both answered errClosing, and newRun answered
// 503 (and deleted a stateless run's thread) for a run running elsewhere.
func TestUnmakeRunClaimedElsewhere(t *testing.T) {
	for _, tc := range []struct {
		status, worker string
		removed        bool
	}{
		{RunRunning, "other", false},
		{RunPending, "other", false},
		{RunPending, "", true},
	} {
		st := storeWithRun(t, tc.status, tc.worker)
		s, err := New(Config{Store: st, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		removed, err := s.unmakeRun(&Run{ID: "r1", ThreadID: "t1"})
		s.Close(context.Background())
		if err != nil || removed != tc.removed {
			t.Errorf("%s run of worker %q: unmakeRun = %v, %v; want %v, nil", tc.status, tc.worker, removed, err, tc.removed)
		}
		_, err = st.Run(t.Context(), "r1")
		if exists := err == nil; exists == tc.removed {
			t.Errorf("%s run of worker %q: in the store after unmakeRun: %v; want %v", tc.status, tc.worker, exists, !tc.removed)
		}
	}
}

// watchedStore is a memory store that says it is shared by several
// instances (a RunWatcher that reports nothing).
type watchedStore struct{ *MemoryStore }

func (watchedStore) WatchRuns(ctx context.Context, fn func(string)) error {
	<-ctx.Done()
	return nil
}

// TestAbandonedSharedStore: a wait on a pending run a closed server will
// not start ends, with a store shared by several instances, with an error
// that names the run and tells the client to join it (another instance or
// the next start runs it: a client told to retry would create it again);
// with a store of one instance, with errClosing.
func TestAbandonedSharedStore(t *testing.T) {
	for _, shared := range []bool{false, true} {
		var st Store = storeWithRun(t, RunPending, "")
		if shared {
			st = watchedStore{st.(*MemoryStore)}
		}
		s, err := New(Config{Store: st, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, _, err = s.waitDone(t.Context(), httptest.NewRecorder(), &Run{ID: "r1", ThreadID: "t1"}, false)
		if !shared {
			if err != errClosing {
				t.Errorf("one instance's store: waitDone error %v; want errClosing", err)
			}
			continue
		}
		if err == nil || err == errClosing || !strings.Contains(err.Error(), "r1") || !strings.Contains(err.Error(), "/threads/t1/runs/r1/join") {
			t.Errorf("shared store: waitDone error %v; want one naming run r1 and its /join", err)
		}
	}
}
