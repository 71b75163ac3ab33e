package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

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
