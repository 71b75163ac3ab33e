package graph_test

// Tests that run part of their work in a child process (this test binary
// run again), to kill it with SIGKILL or to have two processes write one
// thread.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
)

const (
	childMode = "AGENTGRAPH_TEST_CHILD"      // what the child does
	childDB   = "AGENTGRAPH_TEST_CHILD_DB"   // SQLite path or PostgreSQL DSN
	childSide = "AGENTGRAPH_TEST_CHILD_SIDE" // file the child's nodes log executions to
)

type job struct {
	Log []string
	N   int
}

var (
	jobLog = graph.Append(func(s *job) *[]string { return &s.Log })
	jobN   = graph.Sum(func(s *job) *int { return &s.N })
)

// record appends a line to the side-effect file: what ran, in which process.
func record(path, label string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(f, "%d %s\n", os.Getpid(), label)
	f.Close()
}

func killSelf() {
	killProcess(os.Getpid())
	select {}
}

// jobGraph: "step" runs 6 times (N 0..5), then "a" and "b" run in parallel,
// then "end". mode says where a child kills itself.
func jobGraph(t testing.TB, saver checkpoint.Saver, side, mode string) *graph.Compiled[job] {
	t.Helper()
	g := graph.New[job]()
	g.AddNode("step", func(_ context.Context, s job) (graph.Update[job], error) {
		if mode == "between" && s.N == 3 {
			killSelf() // steps 1-3 are saved; step 4 has not started
		}
		label := "step" + strconv.Itoa(s.N)
		record(side, label)
		if mode == "inside" && s.N == 4 {
			killSelf() // step 5 ran its node, but its write was not saved
		}
		return graph.Updates(jobLog.Set([]string{label}), jobN.Set(1)), nil
	})
	g.AddNode("a", func(context.Context, job) (graph.Update[job], error) {
		record(side, "a")
		return jobLog.Set([]string{"a"}), nil
	})
	g.AddNode("b", func(ctx context.Context, _ job) (graph.Update[job], error) {
		record(side, "b")
		if mode == "during" {
			// Die in the middle of the parallel step, once a's write is saved.
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				snap, err := saver.Get(ctx, "job", "")
				if err == nil && len(snap.Writes) > 0 {
					killSelf()
				}
				time.Sleep(2 * time.Millisecond)
			}
			return graph.Update[job]{}, errors.New("a's write was never saved")
		}
		return jobLog.Set([]string{"b"}), nil
	})
	g.AddNode("end", func(context.Context, job) (graph.Update[job], error) {
		record(side, "end")
		return jobLog.Set([]string{"end"}), nil
	})
	g.AddEdge(graph.START, "step")
	g.AddConditionalEdges("step", func(_ context.Context, s job) (graph.Route, error) {
		if s.N < 6 {
			return graph.To("step"), nil
		}
		return graph.To("a", "b"), nil
	}, "step", "a", "b")
	g.AddEdge("a", "end").AddEdge("b", "end").AddEdge("end", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runChild runs this test binary again as a child doing mode.
func runChild(t *testing.T, test, mode, db, side string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), childMode+"="+mode, childDB+"="+db, childSide+"="+side)
	cmd.Stderr = os.Stderr
	return cmd
}

func sideLines(t *testing.T, path string) (byPid map[int][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byPid = map[int][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pid, label, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.Atoi(pid)
		byPid[n] = append(byPid[n], label)
	}
	return byPid
}

func TestKillAndResume(t *testing.T) {
	if mode := os.Getenv(childMode); mode == "between" || mode == "inside" || mode == "during" {
		ctx := context.Background()
		saver, err := sqlite.New(ctx, sqlite.Config{Path: os.Getenv(childDB)})
		if err != nil {
			t.Fatal(err)
		}
		c := jobGraph(t, saver, os.Getenv(childSide), mode)
		_, err = c.Invoke(onThread("job"), job{})
		t.Fatalf("child was not killed: run ended with %v", err)
	}
	want := []string{"step0", "step1", "step2", "step3", "step4", "step5", "a", "b", "end"}
	for _, mode := range []string{"between", "inside", "during"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			db, side := filepath.Join(dir, "cp.db"), filepath.Join(dir, "side.log")
			err := runChild(t, "TestKillAndResume", mode, db, side).Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child: %v, want killed by SIGKILL", err)
			}
			ctx := context.Background()
			saver, err := sqlite.New(ctx, sqlite.Config{Path: db})
			if err != nil {
				t.Fatal(err)
			}
			defer saver.Close()
			c := jobGraph(t, saver, side, "")
			before, err := c.Thread("job").State(ctx)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := saver.Get(ctx, "job", "")
			if err != nil {
				t.Fatal(err)
			}
			saved := slices.Clone(before.Values.Log)
			for _, w := range snap.Writes {
				if !slices.Contains(saved, w.Node) {
					saved = append(saved, w.Node) // a's pending writes
				}
			}
			if mode == "during" && !slices.Contains(saved, "a") {
				t.Fatalf("a's pending write was not saved: %+v", snap.Writes)
			}
			got, err := c.Invoke(onThread("job"), job{}) // a zero input resumes
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got.Log); d != "" {
				t.Fatalf("final log (-want +got):\n%s", d)
			}
			ran := sideLines(t, side)[os.Getpid()]
			for _, label := range ran {
				if slices.Contains(saved, label) {
					t.Errorf("%s ran again after the kill, but its write was saved (saved: %v; resumed run ran %v)", label, saved, ran)
				}
			}
			if mode == "inside" && !slices.Contains(ran, "step4") {
				t.Errorf("step4 ran before the kill but was not saved: it must run again (resumed run ran %v)", ran)
			}
			if len(ran)+len(saved) != len(want) {
				t.Errorf("resumed run ran %v with %v saved: want every node of %v exactly once between them", ran, saved, want)
			}
		})
	}
}

// pgDSN is the PostgreSQL server of tests that need one.
func pgDSN() string {
	if v := os.Getenv("AGENTGRAPH_TEST_POSTGRES"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// pgSaver connects to the test server, or skips when none answers.
func pgSaver(t testing.TB, schema string) *postgres.Saver {
	t.Helper()
	return pgSaverWith(t, postgres.Config{Schema: schema})
}

// pgSaverWith connects with cfg (its Pool set here), or skips when no
// server answers.
func pgSaverWith(t testing.TB, cfg postgres.Config) *postgres.Saver {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, pgDSN())
	if err != nil {
		t.Fatalf("AGENTGRAPH_TEST_POSTGRES: %v", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		t.Skipf("PostgreSQL does not answer at %s (%v); start it or set AGENTGRAPH_TEST_POSTGRES to a server's DSN to run this test", pgDSN(), err)
	}
	cfg.Pool = pool
	s, err := postgres.New(ctx, cfg)
	if err != nil {
		pool.Close()
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return s
}

const pgTestSchema = "agentgraph_graph_test"

// TestTwoProcessesConflict has two processes resume one paused thread on
// one PostgreSQL: both run the node, exactly one saves its step, the other
// gets a *checkpoint.ConflictError.
func TestTwoProcessesConflict(t *testing.T) {
	if os.Getenv(childMode) == "writer" {
		saver := pgSaver(t, pgTestSchema)
		thread, gate := os.Getenv(childDB), os.Getenv(childSide)
		c := raceGraph(t, saver, func() {
			record(gate+".entered", "entered")
			for {
				if _, err := os.Stat(gate); err == nil {
					return
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
		_, err := c.Invoke(onThread(thread), chat{})
		var ce *checkpoint.ConflictError
		switch {
		case errors.As(err, &ce):
			os.Exit(3)
		case err != nil:
			t.Fatal(err)
		}
		return
	}
	saver := pgSaver(t, pgTestSchema)
	ctx := context.Background()
	thread := fmt.Sprintf("race-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { saver.DeleteThread(context.Background(), thread) })
	c := raceGraph(t, saver, func() {})
	if _, err := c.Invoke(onThread(thread), chat{Draft: "go"}, graph.InterruptBefore("reply")); !errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("seeding: %v", err)
	}
	gate := filepath.Join(t.TempDir(), "gate")
	cmds := []*exec.Cmd{runChild(t, "TestTwoProcessesConflict", "writer", thread, gate), runChild(t, "TestTwoProcessesConflict", "writer", thread, gate)}
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, _ := os.ReadFile(gate + ".entered")
		if strings.Count(string(data), "entered") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the two writers did not both reach the node")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	codes := []int{}
	for _, cmd := range cmds {
		err := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, code)
	}
	slices.Sort(codes)
	if d := cmp.Diff([]int{0, 3}, codes); d != "" {
		t.Fatalf("exit codes (-want +got; 3 is a conflict):\n%s", d)
	}
	st, err := c.Thread(thread).State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u, err := saver.Usage(ctx, thread)
	if err != nil {
		t.Fatal(err)
	}
	if st.Values.Turns != 1 || u.Checkpoints != 3 {
		t.Fatalf("state %+v with %d checkpoints: want one writer's step and no fork", st.Values, u.Checkpoints)
	}
}

func raceGraph(t testing.TB, saver checkpoint.Saver, wait func()) *graph.Compiled[chat] {
	t.Helper()
	g := graph.New[chat]()
	g.AddNode("reply", func(context.Context, chat) (graph.Update[chat], error) {
		wait()
		return chatTurns.Set(1), nil
	})
	g.AddEdge(graph.START, "reply").AddEdge("reply", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
