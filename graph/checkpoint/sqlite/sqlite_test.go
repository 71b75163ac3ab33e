package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/checkpointtest"
	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/proctest"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
	"github.com/agentgraph/agentgraph/internal/sqlitedb/sqlitedbtest"
)

func TestMain(m *testing.M) {
	proctest.Main(func(ctx context.Context, path string) (checkpoint.Saver, func(), error) {
		s, err := sqlite.New(ctx, sqlite.Config{Path: path})
		if err != nil {
			return nil, nil, err
		}
		return s, func() { s.Close() }, nil
	})
	goleak.VerifyTestMain(m)
}

func open(t testing.TB, path string) *sqlite.Saver {
	t.Helper()
	s, err := sqlite.New(context.Background(), sqlite.Config{Path: path})
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

func TestConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		return openCorruptible(t, filepath.Join(t.TempDir(), "checkpoints.db"))
	})
}

// corruptible is a Saver whose stored data the conformance suite can
// damage through a second connection to its file.
type corruptible struct {
	*sqlite.Saver
	db *sql.DB
}

var _ checkpointtest.Corrupter = corruptible{}

func openCorruptible(t testing.TB, path string) corruptible {
	t.Helper()
	s := open(t, path)
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return corruptible{s, db}
}

// exec runs a statement that must change exactly one row.
func (c corruptible) exec(ctx context.Context, query string, args ...any) error {
	res, err := c.db.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%d rows changed (%v); want 1", n, err)
	}
	return nil
}

func (c corruptible) CorruptBlob(ctx context.Context, threadID, channel string, n int64, kind checkpoint.Kind, base int64) error {
	return c.exec(ctx, `UPDATE agentgraph_blobs SET kind = ?, base = ? WHERE thread_id = ? AND channel = ? AND writer = ?`,
		int(kind), base, threadID, channel, n)
}

func (c corruptible) CorruptRef(ctx context.Context, threadID string, n int64, channel string, writer int64) error {
	return c.exec(ctx, `UPDATE agentgraph_checkpoints SET refs = json_set(CAST(refs AS TEXT), '$."' || ? || '"[1]', ?)
		WHERE thread_id = ? AND seq = ?`, channel, writer, threadID, n)
}

// TestCorruptRecords damages the columns of a checkpoint in ways the
// conformance suite cannot express: references, nodes and metadata that do
// not decode, and numbers beyond 64 bits.
func TestCorruptRecords(t *testing.T) {
	ctx := context.Background()
	s := openCorruptible(t, filepath.Join(t.TempDir(), "records.db"))
	tests := []struct {
		name, column, value string
	}{
		{"references not JSON", "refs", `{"n":[1,`},
		{"references of the wrong type", "refs", `{"n":["1","x"]}`},
		{"references beyond 64 bits", "refs", `{"n":[1,18446744073709551616]}`},
		{"references beyond int64", "refs", `{"n":[1,9223372036854775808]}`},
		{"references as an array", "refs", `[[1,1]]`},
		{"nodes not JSON", "body", `{"ran":`},
		{"nodes as null", "body", `null`},
		{"tasks as null", "body", `{"next":null}`},
		{"nodes in a newer format", "body", `{"v":2,"tasks":[{"id":"t1","node":"approve"}]}`},
		{"task without node", "body", `{"next":[{"id":"t1"}]}`},
		{"metadata not JSON", "metadata", `{"source":`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cp := &checkpoint.Checkpoint{ThreadID: tc.name, Versions: map[string]uint64{"n": 1}}
			if err := s.Put(ctx, "", cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte("1")}}, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.exec(ctx, `UPDATE agentgraph_checkpoints SET `+tc.column+` = ? WHERE thread_id = ?`, tc.value, tc.name); err != nil {
				t.Fatal(err)
			}
			checkpointtest.CheckCorrupt(t, s, tc.name, cp.ID)
			checkpointtest.CheckCorrupt(t, s, tc.name, "")
		})
	}
}

// TestProcesses shows the optimistic concurrency across processes sharing
// one file.
func TestProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	proctest.Run(t, open(t, path), path)
}

// TestFirstStart starts several processes on a new file at once.
func TestFirstStart(t *testing.T) {
	proctest.FirstStart(t, filepath.Join(t.TempDir(), "fresh.db"))
}

func TestNewConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  sqlite.Config
		want string
	}{
		{"no path", sqlite.Config{}, "Config.Path is empty"},
		{"memory", sqlite.Config{Path: ":memory:"}, "checkpoint.NewMemory"},
		{"query in path", sqlite.Config{Path: "a.db?mode=ro"}, "plain file path"},
		{"negative busy timeout", sqlite.Config{Path: "a.db", BusyTimeout: -time.Second}, "BusyTimeout"},
		{"missing directory", sqlite.Config{Path: "/nonexistent/dir/a.db"}, "directory exists"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sqlite.New(context.Background(), tc.cfg)
			if err == nil {
				s.Close()
				t.Fatalf("New succeeded; want an error saying %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestReopen shows that a thread survives closing and reopening the file,
// and that the schema is not migrated twice.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reopen.db")
	ctx := context.Background()
	s, err := sqlite.New(ctx, sqlite.Config{Path: path, SyncFull: true})
	if err != nil {
		t.Fatal(err)
	}
	cp := &checkpoint.Checkpoint{ThreadID: "t", Versions: map[string]uint64{"n": 1}}
	if err := s.Put(ctx, "", cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte("1")}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again := open(t, path)
	snap, err := again.Get(ctx, "t", "")
	if err != nil || snap.ID != cp.ID {
		t.Fatalf("after reopening: %v, %v; want checkpoint %s", snap, err, cp.ID)
	}
}

// TestNewWaitsForFirstWriter opens a Saver on a new file while another
// connection holds its write lock before the file is in WAL: SQLite
// answers the Saver's switch to WAL with SQLITE_BUSY at once, without
// waiting for the busy timeout, and New used to fail with it. New must
// wait for the writer, then succeed.
func TestNewWaitsForFirstWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fresh.db")
	release := sqlitedbtest.HoldWriteLock(t, path)
	type result struct {
		s   *sqlite.Saver
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := sqlite.New(t.Context(), sqlite.Config{Path: path, BusyTimeout: time.Minute})
		done <- result{s, err}
	}()
	// New cannot finish while the lock is held; a New that fails does
	// so at once. The pause gives it the time to, not a deadline.
	var r result
	select {
	case r = <-done:
		release()
	case <-time.After(300 * time.Millisecond):
		release()
		r = <-done
	}
	if r.err != nil {
		t.Fatalf("New while another connection held the new file's write lock: %v; want it to wait for the lock", r.err)
	}
	r.s.Close()
}

// TestNewWaitBoundedByContext checks that New stops waiting for a held
// write lock when its context ends, whatever its busy timeout.
func TestNewWaitBoundedByContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fresh.db")
	release := sqlitedbtest.HoldWriteLock(t, path)
	defer release()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		s, err := sqlite.New(ctx, sqlite.Config{Path: path, BusyTimeout: time.Hour})
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	// New cannot finish while the lock is held and its context lives; a
	// New that fails does so at once. The pause gives it the time to, not
	// a deadline.
	select {
	case err := <-done:
		t.Fatalf("New while another connection held the write lock returned %v before its context ended; want it to wait", err)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	// The lock is still held: only the cancellation can end the wait. The
	// minute bounds a regression (a wait of the whole busy timeout), so
	// that it fails rather than hangs.
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("New with its context cancelled while the lock was held: %v; want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Errorf("New still waits for the write lock a minute after its context was cancelled; want it to return context.Canceled")
	}
}

// TestConcurrentFirstOpens opens a new file from several goroutines at
// once, as processes starting together do (TestFirstStart starts them).
func TestConcurrentFirstOpens(t *testing.T) {
	for range 20 {
		path := filepath.Join(t.TempDir(), "fresh.db")
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				s, err := sqlite.New(t.Context(), sqlite.Config{Path: path})
				if err == nil {
					err = s.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("New %d of a new file: %v", i, err)
			}
		}
	}
}
