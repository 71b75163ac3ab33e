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
// of a thread's latest checkpoint (Get of ""), or answers its Puts with a
// conflict (another writer moved the thread on).
type brokenSaver struct {
	checkpoint.Saver
	saves, reads, conflicts atomic.Bool
}

func (b *brokenSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	if b.saves.Load() {
		return errSaverDown
	}
	if b.conflicts.Load() {
		return &checkpoint.ConflictError{ThreadID: cp.ThreadID, Expected: expect, Actual: "moved-on"}
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

// syncBrokenSaver is a brokenSaver made a checkpoint.Syncer (its NoSync
// saves are its saves) whose Sync fails once armed.
type syncBrokenSaver struct {
	*brokenSaver
	syncs atomic.Bool
}

func (s *syncBrokenSaver) PutNoSync(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	return s.Put(ctx, expect, cp, blobs, writes)
}

func (s *syncBrokenSaver) PutWritesNoSync(ctx context.Context, thread, id string, writes []checkpoint.Write) error {
	return s.PutWrites(ctx, thread, id, writes)
}

func (s *syncBrokenSaver) Sync(context.Context) error {
	if s.syncs.Load() {
		return errSaverDown
	}
	return nil
}

var _ checkpoint.Syncer = (*syncBrokenSaver)(nil)

// loggedNotSent checks that msg, a failed run's error as a client gets it,
// is the generic message with an error id, without the checkpointer's
// text, and that logs hold the checkpointer's error under that id.
func loggedNotSent(t *testing.T, logs *observer.ObservedLogs, msg string) {
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

// failedRun runs the test server's agent on a new thread with durability,
// by /wait and by a stream, and returns the __error__ /wait answers and
// the data of the stream's last event, which must be an error event.
func failedRun(t *testing.T, url, durability string) (wait, stream struct{ Error, Message string }) {
	t.Helper()
	in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
	var out struct {
		Error struct{ Error, Message string } `json:"__error__"`
	}
	if code := do(t, "POST", url+"/threads/"+newThread(t, url)+"/runs/wait", map[string]any{"assistant_id": "agent", "input": in, "durability": durability}, nil, &out); code != 200 {
		t.Fatalf("wait: %d", code)
	}
	body, _ := json.Marshal(map[string]any{"assistant_id": "agent", "input": in, "durability": durability})
	resp, err := http.Post(url+"/threads/"+newThread(t, url)+"/runs/stream", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs := readSSE(t, resp.Body)
	if len(evs) == 0 || evs[len(evs)-1].Name != "error" {
		t.Fatalf("stream: %v; want it to end with an error event", evs)
	}
	if err := json.Unmarshal(evs[len(evs)-1].Data, &stream); err != nil {
		t.Fatal(err)
	}
	return out.Error, stream
}

// TestCheckpointerSyncErrorNotSent: a run in durability async whose
// checkpointer's Sync fails (a checkpoint.Syncer's, which makes the
// run's saves durable at its end) ends as one whose save failed: a
// generic message and an error id, named Error, in /wait's __error__,
// the run's record and the stream's error event; the Sync's text is
// logged under that id, not sent.
func TestCheckpointerSyncErrorNotSent(t *testing.T) {
	saver := &syncBrokenSaver{brokenSaver: &brokenSaver{Saver: checkpoint.NewMemory()}}
	core, logs := observer.New(zapcore.ErrorLevel)
	ts := newTestServer(t, server.Config{Checkpointer: saver, Logger: zap.New(core)})
	saver.syncs.Store(true)
	wait, stream := failedRun(t, ts.URL, "async")
	for _, e := range []struct{ Error, Message string }{wait, stream} {
		if e.Error != "Error" {
			t.Errorf("error %+v; want it named Error", e)
		}
		loggedNotSent(t, logs, e.Message)
	}
}

// TestCheckpointConflictNamedError: a run that fails because another
// writer moved its thread on (a checkpoint conflict, said as is) names
// its error Error, in /wait's __error__ and in the stream's error event,
// as before checkpointer failures were told apart.
func TestCheckpointConflictNamedError(t *testing.T) {
	saver := &brokenSaver{Saver: checkpoint.NewMemory()}
	ts := newTestServer(t, server.Config{Checkpointer: saver})
	saver.conflicts.Store(true)
	for _, durability := range []string{"sync", "async", "exit"} {
		wait, stream := failedRun(t, ts.URL, durability)
		for _, e := range []struct{ Error, Message string }{wait, stream} {
			if e.Error != "Error" || !strings.Contains(e.Message, "moved on by another writer") {
				t.Errorf("durability %s: error %+v; want it named Error, saying the conflict", durability, e)
			}
		}
	}
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
		loggedNotSent(t, logs, msg)
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
