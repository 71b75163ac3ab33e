package server_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentgraph/agentgraph/agent/server"
)

// failingLocks is a Store and ThreadLocker whose LockThread, once armed,
// lets one call pass (the cancel request's) and then fails every call
// made with a context that cannot end (the server's own work), counting
// them.
type failingLocks struct {
	server.Store
	mu     sync.Mutex
	armed  bool
	passed bool
	fails  int
}

func (l *failingLocks) LockThread(ctx context.Context, threadID string) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.armed || ctx.Done() != nil {
		return func() {}, nil
	}
	if !l.passed {
		l.passed = true
		return func() {}, nil
	}
	l.fails++
	return nil, errors.New("failingLocks: transient error")
}

func (l *failingLocks) failed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fails
}

// TestRollbackLockRetriesLogOnce: a rollback whose thread lock keeps
// failing logs one warning, naming the run, for its first tries (then
// one every rollbackLogEvery tries: TestLockRollbackLogsDuringOutage),
// and one error, naming the run, when it gives up as the server
// closes (issue #21: it logged a warning on every retry).
func TestRollbackLockRetriesLogOnce(t *testing.T) {
	st := &failingLocks{Store: server.NewMemoryStore()}
	core, logs := observer.New(zapcore.WarnLevel)
	ts := newTestServer(t, server.Config{Store: st, Logger: zap.New(core)})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	runs := ts.URL + "/threads/" + th.ThreadID + "/runs"
	in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
	var run struct {
		RunID string `json:"run_id"`
	}
	if code := do(t, "POST", runs, map[string]any{"assistant_id": "slow", "input": in}, nil, &run); code != 200 {
		t.Fatalf("run: %d", code)
	}
	waitUntil(t, "the run to wait in its node", func() bool { return ts.gates.waiting(th.ThreadID) })
	st.mu.Lock()
	st.armed = true
	st.mu.Unlock()
	if code := do(t, "POST", runs+"/"+run.RunID+"/cancel?action=rollback", nil, nil, nil); code != http.StatusNoContent && code != http.StatusAccepted {
		t.Fatalf("rollback: %d", code)
	}
	// The waits between tries double from 10ms: 4 failures take 70ms.
	waitUntil(t, "the rollback to fail to lock 4 times", func() bool { return st.failed() >= 4 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ts.Server.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var retries, gaveUp int
	for _, e := range logs.All() {
		if e.ContextMap()["run"] != run.RunID {
			continue
		}
		switch {
		case e.Level == zapcore.WarnLevel && strings.Contains(e.Message, "trying again"):
			retries++
		case e.Level == zapcore.ErrorLevel && strings.Contains(e.Message, "rolling back"):
			gaveUp++
		}
	}
	if retries != 1 || gaveUp != 1 {
		for _, e := range logs.All() {
			t.Logf("%s %s %v", e.Level, e.Message, e.ContextMap())
		}
		t.Errorf("after %d failed locks: %d retry warnings and %d give-up errors naming run %s; want 1 and 1", st.failed(), retries, gaveUp, run.RunID)
	}
}
