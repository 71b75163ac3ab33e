package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

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
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestConformanceFile(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Store {
		return open(t, sqlite.Config{Path: filepath.Join(t.TempDir(), "memory.db")})
	})
}

func TestConformanceInMemory(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Store {
		return open(t, sqlite.Config{Path: ":memory:"})
	})
}

func TestConformanceSharedDB(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Store {
		db, err := sql.Open("sqlite", sqlite.DSN(filepath.Join(t.TempDir(), "shared.db"), 0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return open(t, sqlite.Config{DB: db})
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
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestItemsConformanceFile(t *testing.T) {
	memorytest.RunItems(t, func(t *testing.T, now func() time.Time) memory.Items {
		return openItems(t, sqlite.Config{Path: filepath.Join(t.TempDir(), "items.db"), Now: now})
	})
}

func TestItemsConformanceInMemory(t *testing.T) {
	memorytest.RunItems(t, func(t *testing.T, now func() time.Time) memory.Items {
		return openItems(t, sqlite.Config{Path: ":memory:", Now: now})
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
