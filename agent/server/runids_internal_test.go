package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// runsStore answers Runs through a hook of the test's.
type runsStore struct {
	Store
	calls int
	runs  func(ctx context.Context, q RunQuery) ([]*Run, error)
}

func (s *runsStore) Runs(ctx context.Context, q RunQuery) ([]*Run, error) {
	s.calls++
	if s.calls > 50 {
		return nil, errors.New("Runs called more than 50 times")
	}
	return s.runs(ctx, q)
}

// newRunsServer makes a server on a memory store with thread "t" of n
// finished runs, r000 the oldest.
func newRunsServer(t *testing.T, n int) (*Server, *runsStore, []string) {
	t.Helper()
	ctx := t.Context()
	mem := NewMemoryStore()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := mem.CreateThread(ctx, &Thread{ID: "t", Status: ThreadIdle, CreatedAt: at, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range n {
		id := fmt.Sprintf("r%03d", i)
		ids = append(ids, id)
		at := at.Add(time.Duration(i) * time.Second)
		if err := mem.CreateRun(ctx, &Run{ID: id, ThreadID: "t", AssistantID: "a", Status: RunSuccess, CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	st := &runsStore{Store: mem}
	st.runs = mem.Runs
	s, err := New(Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, st, ids
}

// TestRunIDsStoreIgnoringPage: a store whose Runs ignores Offset and
// Limit (returning every run each time) ends runIDs after the page that
// brings no new run, with each run once.
func TestRunIDsStoreIgnoringPage(t *testing.T) {
	s, st, want := newRunsServer(t, 150)
	mem := st.Store
	st.runs = func(ctx context.Context, q RunQuery) ([]*Run, error) {
		return mem.Runs(ctx, RunQuery{ThreadID: q.ThreadID, Status: q.Status})
	}
	got, err := s.runIDs(t.Context(), "t")
	slices.Sort(got)
	if err != nil || !slices.Equal(got, want) || st.calls > 2 {
		t.Errorf("runIDs = %d ids, %v after %d calls of Runs; want the %d runs after 2", len(got), err, st.calls, len(want))
	}
}

// TestRunIDsPruneBetweenPages: the oldest runs deleted (as Prune does)
// after runIDs read its first page skip none of the runs left.
func TestRunIDsPruneBetweenPages(t *testing.T) {
	s, st, ids := newRunsServer(t, 250)
	mem := st.Store
	st.runs = func(ctx context.Context, q RunQuery) ([]*Run, error) {
		page, err := mem.Runs(ctx, q)
		if st.calls == 1 {
			for _, id := range ids[:10] {
				if err := mem.DeleteRun(ctx, id); err != nil {
					t.Error(err)
				}
			}
		}
		return page, err
	}
	got, err := s.runIDs(t.Context(), "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[10:] {
		if !slices.Contains(got, id) {
			t.Errorf("runIDs skipped run %s, not deleted", id)
		}
	}
}
