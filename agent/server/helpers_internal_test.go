package server

import (
	"encoding/json"
	"testing"
	"time"
)

// storeWithRun makes a memory store with thread t1 (busy) and its run r1
// of status status and worker worker (attempt 1).
func storeWithRun(t *testing.T, status, worker string) Store {
	t.Helper()
	ctx := t.Context()
	st := NewMemoryStore()
	at := time.Now()
	if err := st.CreateThread(ctx, &Thread{ID: "t1", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRun(ctx, &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: status,
		Worker: worker, Attempt: 1, Metadata: map[string]any{},
		Kwargs: json.RawMessage(`{"assistant_id":"a"}`), MultitaskStrategy: "enqueue"}); err != nil {
		t.Fatal(err)
	}
	return st
}
