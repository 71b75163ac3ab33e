package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/cognition/cognitiontest"
	"github.com/agentgraph/agentgraph/cognition/sqlite"
	"github.com/agentgraph/agentgraph/internal/sqlitedb/sqlitedbtest"
	"github.com/agentgraph/agentgraph/memory"
	"go.uber.org/goleak"
)

// openPath opens a store on the database file path.
func openPath(ctx context.Context, path string) (cognitiontest.DurableStore, func(), error) {
	s, err := sqlite.New(ctx, sqlite.Config{Path: path})
	if err != nil {
		return nil, nil, err
	}
	return s, func() { s.Close() }, nil
}

func TestMain(m *testing.M) {
	cognitiontest.CrashChild(openPath)
	goleak.VerifyTestMain(m)
}

// TestLearningSurvivesKill kills a process with queued and claimed
// learning tasks on a database file and learns them in this one.
func TestLearningSurvivesKill(t *testing.T) {
	cognitiontest.RunCrash(t, filepath.Join(t.TempDir(), "cognition.db"), openPath)
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
	sqlitedbtest.Conformance(t, dsn, cognitiontest.Run, func(t *testing.T, d sqlitedbtest.Database) cognition.Store {
		return open(t, sqlite.Config{Path: d.Path, DB: d.DB})
	})
}

// TestServiceSurvivesRestart learns through a Service on a database file,
// reopens the file, and finds the profile and episode in a new Service's
// context.
func TestServiceSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cognition.db")
	learner := cognition.LearnerFunc(func(_ context.Context, in cognition.LearnInput) (cognition.Learning, error) {
		return cognition.Learning{
			Profile:  cognition.ProfileUpdate{Expertise: cognition.Novice},
			Episodes: []cognition.EpisodeDraft{{Summary: "Asked how goroutines differ from threads", Topics: []string{"goroutines"}, Importance: 0.6}},
		}, nil
	})
	first, err := sqlite.New(t.Context(), sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := cognition.New(cognition.Config{Store: first, Learner: learner})
	if err != nil {
		t.Fatal(err)
	}
	err = svc.Learn(t.Context(), cognition.Interaction{UserID: "u1", Outcome: cognition.Success,
		Messages: []memory.Message{{Role: memory.RoleUser, Content: "goroutines vs threads?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	// ContextTimeout -1: the default 100 ms runs out on a loaded machine.
	svc2, err := cognition.New(cognition.Config{Store: open(t, sqlite.Config{Path: path}), ContextTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer svc2.Close(t.Context())
	cc, err := svc2.Context(t.Context(), "u1", "goroutines again")
	if err != nil {
		t.Fatal(err)
	}
	if cc.Profile.Expertise != cognition.Novice || len(cc.Episodes) != 1 || cc.Identity.Metrics.Successes != 1 {
		t.Errorf("context after restart = %+v, want the novice profile, one episode and one success", cc)
	}
}

func TestTaskQueueConformance(t *testing.T) {
	cognitiontest.RunTaskQueue(t, func(t *testing.T) cognition.TaskQueue {
		return open(t, sqlite.Config{Path: filepath.Join(t.TempDir(), "cognition.db")})
	})
}
