package server_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// BenchmarkSQLiteAppendEvent: one event appended to a running run's log
// on a SQLite file (synchronous=NORMAL, as OpenSQLite opens it), with the
// log bounded at 1000 events so that, past the first thousand, each
// append also drops the oldest event, as a long run's do.
func BenchmarkSQLiteAppendEvent(b *testing.B) {
	st, err := server.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "s.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.CreateThread(ctx, &server.Thread{ID: "t"}); err != nil {
		b.Fatal(err)
	}
	if err := st.CreateRun(ctx, &server.Run{ID: "r", ThreadID: "t", Status: server.RunRunning}); err != nil {
		b.Fatal(err)
	}
	data := json.RawMessage(`{"messages":[{"type":"ai","content":"a chunk of an answer"}]}`)
	for range 1000 {
		if _, err := st.AppendEvent(ctx, "r", "values", data, 1000); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, err := st.AppendEvent(ctx, "r", "values", data, 1000); err != nil {
			b.Fatal(err)
		}
	}
}
