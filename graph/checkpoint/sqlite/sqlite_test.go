package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/checkpointtest"
	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/proctest"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
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
		return open(t, filepath.Join(t.TempDir(), "checkpoints.db"))
	})
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
