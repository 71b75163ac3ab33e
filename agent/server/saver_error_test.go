package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// errSaverDown is a checkpointer's error whose text (its database's
// details) a client is not to see.
var errSaverDown = errors.New("brokenSaver: SQLSTATE 53100 could not extend file base/16384/2619")

// brokenSaver fails, once armed, its saves (Put, PutWrites) or its reads
// of a thread's latest checkpoint (Get of "").
type brokenSaver struct {
	checkpoint.Saver
	saves, reads atomic.Bool
}

func (b *brokenSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	if b.saves.Load() {
		return errSaverDown
	}
	return b.Saver.Put(ctx, expect, cp, blobs, writes)
}

func (b *brokenSaver) PutWrites(ctx context.Context, thread, id string, writes []checkpoint.Write) error {
	if b.saves.Load() {
		return errSaverDown
	}
	return b.Saver.PutWrites(ctx, thread, id, writes)
}

func (b *brokenSaver) Get(ctx context.Context, thread, id string) (*checkpoint.Snapshot, error) {
	if id == "" && b.reads.Load() {
		return nil, errSaverDown
	}
	return b.Saver.Get(ctx, thread, id)
}

// TestCheckpointerErrorNotSent: a run that fails because its
// checkpointer failed (a save of its graph's, in each durability mode,
// or the server's read of the thread's latest checkpoint) ends with a
// generic message and an error id, in /wait's __error__ and in the
// stream's error event, and the checkpointer's error is logged under
// that id; the checkpointer's text is not sent (it was, where a store's
// error was not). A node's own error is still sent as is.
func TestCheckpointerErrorNotSent(t *testing.T) {
	saver := &brokenSaver{Saver: checkpoint.NewMemory()}
	core, logs := observer.New(zapcore.ErrorLevel)
	ts := newTestServer(t, server.Config{Checkpointer: saver, Logger: zap.New(core)})
	logged := func(t *testing.T, msg string) {
		t.Helper()
		if strings.Contains(msg, "SQLSTATE") || !strings.HasPrefix(msg, "internal error; ") {
			t.Fatalf("run's error %q; want a generic message without the checkpointer's text", msg)
		}
		id := msg[strings.LastIndex(msg, " ")+1:]
		for _, l := range logs.All() {
			if f := l.ContextMap(); f["error_id"] == id && strings.Contains(f["error"].(string), errSaverDown.Error()) {
				return
			}
		}
		t.Errorf("no log line with error_id %s and the checkpointer's error in %v", id, logs.All())
	}
	newThread := func(t *testing.T) string {
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th); code != 200 {
			t.Fatalf("thread: %d", code)
		}
		return th.ThreadID
	}
	in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
	for _, c := range []struct {
		name       string
		durability string
		arm        *atomic.Bool
	}{
		{"save sync", "sync", &saver.saves},
		{"save async", "async", &saver.saves},
		{"save exit", "exit", &saver.saves},
		{"latest read", "sync", &saver.reads},
	} {
		t.Run(c.name, func(t *testing.T) {
			tid := newThread(t)
			c.arm.Store(true)
			defer c.arm.Store(false)
			var out struct {
				Error struct{ Error, Message string } `json:"__error__"`
			}
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "input": in, "durability": c.durability}, nil, &out); code != 200 {
				t.Fatalf("wait: %d", code)
			}
			logged(t, out.Error.Message)

			body, _ := json.Marshal(map[string]any{"assistant_id": "agent", "input": in, "durability": c.durability})
			resp, err := http.Post(ts.URL+"/threads/"+newThread(t)+"/runs/stream", "application/json", strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			evs := readSSE(t, resp.Body)
			if len(evs) == 0 || evs[len(evs)-1].Name != "error" {
				t.Fatalf("stream: %v; want it to end with an error event", evs)
			}
			var e struct{ Message string }
			_ = json.Unmarshal(evs[len(evs)-1].Data, &e)
			logged(t, e.Message)
		})
	}
	t.Run("node error", func(t *testing.T) {
		var out struct {
			Error struct{ Error, Message string } `json:"__error__"`
		}
		if code := do(t, "POST", ts.URL+"/threads/"+newThread(t)+"/runs/wait", map[string]any{"assistant_id": "fail", "input": in}, nil, &out); code != 200 || !strings.Contains(out.Error.Message, "node exploded") {
			t.Fatalf("a node's error: %d %+v; want its text", code, out.Error)
		}
	})
}
