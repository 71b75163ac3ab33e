package server_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// dyingSaver is a checkpointer whose Put to another thread than keep
// ends the calling goroutine (runtime.Goexit) once armed: the copy that
// calls it stops there, without its error handling, as when its process
// dies between two steps. Only Saver's methods are exposed, so a copy
// goes through Put even when the saver beneath copies threads itself.
type dyingSaver struct {
	checkpoint.Saver
	armed atomic.Bool
	keep  atomic.Value // string
}

func (d *dyingSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	if d.armed.Load() && !strings.HasPrefix(cp.ThreadID, d.keep.Load().(string)) {
		d.armed.Store(false)
		runtime.Goexit()
	}
	return d.Saver.Put(ctx, expect, cp, blobs, writes)
}

// dyingStore is a Store whose CreateThread of a thread other than keep
// ends the calling goroutine once armed.
type dyingStore struct {
	server.Store
	armed atomic.Bool
	keep  atomic.Value // string
}

func (d *dyingStore) CreateThread(ctx context.Context, t *server.Thread) error {
	if d.armed.Load() && t.ID != d.keep.Load().(string) {
		d.armed.Store(false)
		runtime.Goexit()
	}
	return d.Store.CreateThread(ctx, t)
}

// TestCopyCutByACrash: a thread copy whose process dies between its
// steps (while it copies the checkpoints, or before it saves the copy's
// record) leaves no thread behind, and the thread copies again. The
// copy saved its record busy first, then the checkpoints, then the
// status: cut in between, the copy stayed busy for ever, listed by
// search and counted against MaxThreads.
func TestCopyCutByACrash(t *testing.T) {
	for name, open := range backendConfigs {
		for _, at := range []string{"checkpoints", "record"} {
			t.Run(name+"/"+at, func(t *testing.T) {
				cfg := open(t)
				if cfg.Checkpointer == nil {
					cfg.Checkpointer = checkpoint.NewMemory()
				}
				if cfg.Store == nil {
					cfg.Store = server.NewMemoryStore()
				}
				saver := &dyingSaver{Saver: cfg.Checkpointer}
				store := &dyingStore{Store: cfg.Store}
				cfg.Checkpointer, cfg.Store = saver, store
				ts := newTestServer(t, cfg)
				tid, _ := interruptedThread(t, ts.URL, nil)
				saver.keep.Store(tid)
				store.keep.Store(tid)
				if at == "checkpoints" {
					saver.armed.Store(true)
				} else {
					store.armed.Store(true)
				}
				resp, err := http.Post(ts.URL+"/threads/"+tid+"/copy", "application/json", nil)
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					t.Fatalf("the copy cut by the crash answered %d %s; want the connection dropped", resp.StatusCode, b)
				}
				if saver.armed.Load() || store.armed.Load() {
					t.Fatal("the copy never reached the step the test cuts")
				}
				var found []struct {
					ThreadID string `json:"thread_id"`
					Status   string `json:"status"`
				}
				do(t, "POST", ts.URL+"/threads/search", map[string]any{}, nil, &found)
				if len(found) != 1 || found[0].ThreadID != tid {
					t.Fatalf("threads after the cut copy: %+v; want only the source thread", found)
				}
				if found[0].Status == "busy" {
					t.Fatalf("the source thread is %s after the cut copy", found[0].Status)
				}
				var cp struct {
					ThreadID string `json:"thread_id"`
					Status   string `json:"status"`
				}
				if code := do(t, "POST", ts.URL+"/threads/"+tid+"/copy", nil, nil, &cp); code != 200 || cp.Status != "interrupted" {
					t.Fatalf("the copy after the crash: %d %+v; want the interrupted copy", code, cp)
				}
				var st struct {
					Next []string `json:"next"`
				}
				if do(t, "GET", ts.URL+"/threads/"+cp.ThreadID+"/state", nil, nil, &st); len(st.Next) != 1 || st.Next[0] != "review" {
					t.Fatalf("the copy's state: next %v; want [review]", st.Next)
				}
			})
		}
	}
}
