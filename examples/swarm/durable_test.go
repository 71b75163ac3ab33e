package swarm_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/examples/supervisor/supervisortest"
	"github.com/agentgraph/agentgraph/examples/swarm"
	"github.com/agentgraph/agentgraph/mcp"
)

// Environment of a child process of TestKillResume.
const (
	childEnv    = "SWARM_TEST_CHILD" // "run" or "resume"
	childDir    = "SWARM_TEST_DIR"   // where the child writes its files
	childDSN    = "SWARM_TEST_DSN"   // PostgreSQL instead of SQLite files in childDir
	childSchema = "SWARM_TEST_SCHEMA"
)

const killTask = "What is 2 + 3, then what is 4 + 5"

// countingCalculator is a calculator server whose calculate tool appends
// each expression it evaluates to the file calls, so that a test can count
// the calls of several processes.
func countingCalculator(calls string) *server.MCPServer {
	srv := server.NewMCPServer("calculator", "0.0.1", server.WithToolCapabilities(false))
	srv.AddTool(mcpgo.NewTool("calculate", mcpgo.WithDescription("Evaluate an arithmetic expression."),
		mcpgo.WithString("expression", mcpgo.Required())),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			expr := req.GetString("expression", "")
			f, err := os.OpenFile(calls, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				return nil, err
			}
			_, err = fmt.Fprintln(f, expr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, err
			}
			v, err := calculator.Eval(expr)
			if err != nil {
				return mcpgo.NewToolResultError(err.Error()), nil
			}
			return mcpgo.NewToolResultText(expr + " = " + calculator.FormatNumber(v)), nil
		})
	return srv
}

// hangOnReview answers with the offline model but blocks the reflection of
// the output holding hangOn, writing the file marker first: the process is
// then between a saved tool call and its reflection.
func hangOnReview(hangOn, marker string) *llmtest.Model {
	var once sync.Once
	return offline().OnFunc(func(c llmtest.Call) bool {
		r, ok := supervisortest.Parse(c.Prompt)
		if !ok || r.Step != supervisortest.Critique || !strings.Contains(r.Output, hangOn) {
			return false
		}
		once.Do(func() { _ = os.WriteFile(marker, []byte("hung"), 0o600) })
		return true
	}, llmtest.Hang())
}

// child runs the swarm in this process as TestKillResume asks: "run" starts
// killTask and hangs in the reflection of its second step, "resume"
// resumes the thread in the file thread and prints the outcome as JSON.
func child() int {
	dir := os.Getenv(childDir)
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "child:", err); return 2 }
	ctx := context.Background()
	st, err := swarm.OpenStorage(ctx, swarm.StorageConfig{DataDir: filepath.Join(dir, "data"), DSN: os.Getenv(childDSN), Schema: os.Getenv(childSchema)})
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	cfg := swarm.Config{Servers: []mcp.Server{{Name: "calculator", InProcess: countingCalculator(filepath.Join(dir, "calls"))}},
		Checkpointer: st.Checkpointer, Skills: st.Memory, Workflows: st.Memory}
	if os.Getenv(childEnv) == "run" {
		client, err := agent.New(agent.Config{Model: hangOnReview("4 + 5 = 9", filepath.Join(dir, "hung"))})
		if err != nil {
			return fail(err)
		}
		cfg.Client = client
	}
	s, err := swarm.New(cfg)
	if err != nil {
		return fail(err)
	}
	defer s.Close(ctx)
	var seq func(func(swarm.Event, error) bool)
	if os.Getenv(childEnv) == "run" {
		seq = s.Run(ctx, killTask)
	} else {
		thread, err := os.ReadFile(filepath.Join(dir, "thread"))
		if err != nil {
			return fail(err)
		}
		seq = s.Resume(ctx, string(thread))
	}
	wrote := false
	for ev, err := range seq {
		if err != nil {
			return fail(err)
		}
		if !wrote {
			if err := os.WriteFile(filepath.Join(dir, "thread"), []byte(ev.Thread), 0o600); err != nil {
				return fail(err)
			}
			wrote = true
		}
		if ev.Kind == swarm.EventDone {
			if err := json.NewEncoder(os.Stdout).Encode(ev.Outcome); err != nil {
				return fail(err)
			}
		}
	}
	return 0
}

// TestKillResume: a run killed with SIGKILL between its second tool call
// and that call's reflection is resumed by a new process; the resumed run
// finishes, and neither saved tool call is made again.
func TestKillResume(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		killResume(t, "", "")
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn, schema := postgresSchema(t)
		killResume(t, dsn, schema)
	})
}

func killResume(t *testing.T, dsn, schema string) {
	dir := t.TempDir()
	start := func(phase string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+phase, childDir+"="+dir, childDSN+"="+dsn, childSchema+"="+schema)
		return cmd
	}
	first := start("run")
	var stderr strings.Builder
	first.Stderr = &stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- first.Wait() }()
	// Wait for the child to hang in the reflection (or to die).
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(filepath.Join(dir, "hung")); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the first process ended before hanging: %v\n%s", err, stderr.String())
		case <-tick.C:
		}
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	<-exited

	second := start("resume")
	out, err := second.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("resume: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var o swarm.Outcome
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("resume printed %q: %v", out, err)
	}
	if o.Status != swarm.StatusComplete || !strings.Contains(o.Answer, "2 + 3 = 5") || !strings.Contains(o.Answer, "4 + 5 = 9") {
		t.Errorf("resumed outcome: %q, answer %q; want complete with both sums", o.Status, o.Answer)
	}
	calls := map[string]int{}
	f, err := os.Open(filepath.Join(dir, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		calls[sc.Text()]++
	}
	if calls["2 + 3"] != 1 || calls["4 + 5"] != 1 || len(calls) != 2 {
		t.Errorf("tool calls over both processes = %v, want each expression once", calls)
	}
}

// postgresSchema returns the test server's DSN and a fresh schema, dropped
// when the test ends, or skips the test.
func postgresSchema(t *testing.T) (string, string) {
	dsn := os.Getenv("AGENTGRAPH_TEST_POSTGRES")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	db, err := sql.Open("pgx", dsn)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.PingContext(ctx)
		cancel()
	}
	if err != nil {
		t.Skipf("no PostgreSQL at %s (%v); start one or set AGENTGRAPH_TEST_POSTGRES to a reachable DSN", dsn, err)
	}
	schema := fmt.Sprintf("swarm_test_%d", time.Now().UnixNano())
	t.Cleanup(func() {
		if _, err := db.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE"); err != nil {
			t.Errorf("dropping %s: %v", schema, err)
		}
		db.Close()
	})
	return dsn, schema
}

// TestConcurrentTeamSaves: teams saved at once, from many goroutines,
// are all saved (SQLite: no SQLITE_BUSY from a transaction that read
// before it wrote), each with its own seq, in SQLite and in PostgreSQL.
func TestConcurrentTeamSaves(t *testing.T) {
	check := func(t *testing.T, st *swarm.Storage) {
		const n = 16
		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		for i := range 2 * n { // each name twice: adds and replaces
			wg.Go(func() {
				errs <- st.Memory.SaveTeam(t.Context(), swarm.TeamSpec{Name: fmt.Sprintf("team_%d", i%n), Description: "d"}, nil)
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		teams, err := st.Memory.Teams(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, tm := range teams {
			names[tm.Name] = true
		}
		if len(teams) != n || len(names) != n {
			t.Errorf("%d saves of %d teams at once: %d teams, %d names; want %d", 2*n, n, len(teams), len(names), n)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		st, err := swarm.OpenStorage(t.Context(), swarm.StorageConfig{DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		check(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn, schema := postgresSchema(t)
		st, err := swarm.OpenStorage(t.Context(), swarm.StorageConfig{DSN: dsn, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		check(t, st)
	})
}

// TestConcurrentSkillSaves: skills saved at once, from many goroutines,
// each get their own seq (the order Find ranks recency by), in SQLite and
// in PostgreSQL.
func TestConcurrentSkillSaves(t *testing.T) {
	check := func(t *testing.T, st *swarm.Storage, db *sql.DB, table string) {
		const n = 24
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				errs <- st.Memory.Save(t.Context(), swarm.Skill{Agent: "math", Task: fmt.Sprintf("task %d", i), Tool: "add"})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		var rows, seqs, top int
		if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*), COUNT(DISTINCT seq), MAX(seq) FROM `+table).Scan(&rows, &seqs, &top); err != nil {
			t.Fatal(err)
		}
		if rows != n || seqs != n || top != n {
			t.Errorf("%d skills saved at once: %d rows, %d distinct seqs, the highest %d; want %d of each", n, rows, seqs, top, n)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		st, err := swarm.OpenStorage(t.Context(), swarm.StorageConfig{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "memory.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		check(t, st, db, "swarm_skills")
	})
	t.Run("postgres", func(t *testing.T) {
		dsn, schema := postgresSchema(t)
		st, err := swarm.OpenStorage(t.Context(), swarm.StorageConfig{DSN: dsn, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		check(t, st, db, schema+".swarm_skills")
	})
}
