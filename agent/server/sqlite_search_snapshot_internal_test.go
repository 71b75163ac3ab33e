package server

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSQLiteSearchOneSnapshot: a thread of the page deleted and created
// again, with the same id, by another principal, and a thread added,
// after the search chose the page's ids and before it read their
// threads, neither bring the other principal's thread into the page nor
// make the count disagree with it: the search reads one snapshot.
func TestSQLiteSearchOneSnapshot(t *testing.T) {
	ctx := t.Context()
	st, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, id := range []string{"a1", "a2"} {
		th := &Thread{ID: id, Owner: "alice", Status: ThreadIdle, CreatedAt: at.Add(time.Duration(i) * time.Second), UpdatedAt: at}
		if err := st.CreateThread(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	searchPaged = func() {
		searchPaged = nil
		if err := st.DeleteThread(ctx, "a1"); err != nil {
			t.Error(err)
		}
		for _, th := range []*Thread{
			{ID: "a1", Owner: "bob", Status: ThreadIdle, CreatedAt: at, UpdatedAt: at, Metadata: map[string]any{"secret": "bob's"}},
			{ID: "a3", Owner: "alice", Status: ThreadIdle, CreatedAt: at.Add(time.Hour), UpdatedAt: at},
		} {
			if err := st.CreateThread(ctx, th); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { searchPaged = nil }()
	got, total, err := st.SearchThreads(ctx, ThreadQuery{Owner: "alice", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range got {
		if th.Owner != "alice" {
			t.Errorf("alice's search returned thread %s of %q", th.ID, th.Owner)
		}
	}
	if ids := threadIDs(got); !slices.Equal(ids, []string{"a1", "a2"}) || total != 2 {
		t.Errorf("page %v of %d; want [a1 a2] of 2, as before the changes", ids, total)
	}
}
