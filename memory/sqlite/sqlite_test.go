package sqlite_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/internal/sqlitedb/sqlitedbtest"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/memory/memorytest"
	"github.com/agentgraph/agentgraph/memory/sqlite"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func open(t *testing.T, cfg sqlite.Config) *sqlite.Store {
	t.Helper()
	s, err := sqlite.New(t.Context(), cfg)
	return sqlitedbtest.Closed(t, s, err)
}

// TestConformance runs the conformance checks on a database file, in
// memory, and on a database the test opened and shares with the store.
func TestConformance(t *testing.T) {
	dsn := func(path string) string { return sqlite.DSN(path, 0) }
	sqlitedbtest.Conformance(t, dsn, memorytest.Run, func(t *testing.T, d sqlitedbtest.Database) memory.Store {
		return open(t, sqlite.Config{Path: d.Path, DB: d.DB})
	})
}

func TestReopenKeepsConversations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := sqlite.New(t.Context(), sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(t.Context(), "c", memory.Message{Role: memory.RoleUser, Content: "remember me"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSummary(t.Context(), "c", memory.Summary{Text: "s", Through: 1}, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, sqlite.Config{Path: path}) // migrates again: a no-op
	st, err := s.Load(t.Context(), "c", 1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Summary.Text != "s" || len(st.Messages) != 1 || st.Messages[0].Content != "remember me" {
		t.Errorf("after reopening: %+v, want the summary and the message", st)
	}
}

func TestNewNeedsPathOrDB(t *testing.T) {
	if _, err := sqlite.New(t.Context(), sqlite.Config{}); err == nil {
		t.Error("New with neither Path nor DB succeeded")
	}
}

func openItems(t *testing.T, cfg sqlite.Config) *sqlite.Items {
	t.Helper()
	s, err := sqlite.NewItems(t.Context(), cfg)
	return sqlitedbtest.Closed(t, s, err)
}

// TestItemsConformance runs the item checks on a database file, in
// memory, and on a database the test opened and shares with the store.
func TestItemsConformance(t *testing.T) {
	dsn := func(path string) string { return sqlite.DSN(path, 0) }
	sqlitedbtest.Each(t, dsn, func(t *testing.T, db func(*testing.T) sqlitedbtest.Database) {
		memorytest.RunItems(t, func(t *testing.T, now func() time.Time) memory.Items {
			d := db(t)
			return openItems(t, sqlite.Config{Path: d.Path, DB: d.DB, Now: now})
		})
	})
}

func TestItemsShareFileWithStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	st := open(t, sqlite.Config{Path: path})
	now := time.Unix(1000, 0)
	it := openItems(t, sqlite.Config{Path: path, Now: func() time.Time { return now }})
	if _, err := st.Append(t.Context(), "c", memory.Message{Role: memory.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	r := memory.Record{Namespace: []string{"u"}, Key: "k", Value: json.RawMessage(`{"a":1}`), TTL: time.Minute}
	if err := it.Put(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	if err := it.Put(t.Context(), memory.Record{Namespace: []string{"u"}, Key: "keep", Value: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if n, err := it.DeleteExpired(t.Context()); err != nil || n != 1 {
		t.Errorf("DeleteExpired = %d, %v; want 1", n, err)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	it = openItems(t, sqlite.Config{Path: path}) // migrates again: a no-op
	if _, err := it.Get(t.Context(), []string{"u"}, "keep", false); err != nil {
		t.Errorf("after reopening: %v", err)
	}
}
