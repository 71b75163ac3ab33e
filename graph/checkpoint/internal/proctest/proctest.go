// Package proctest runs checkpoint writers in child processes, to show that
// a durable Saver keeps a thread consistent when several processes write to
// it. The test binary re-executes itself: TestMain calls Main, which turns
// the process into a child when the environment says so.
package proctest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

const (
	envAction = "AGENTGRAPH_CHECKPOINT_CHILD"
	envTarget = "AGENTGRAPH_CHECKPOINT_CHILD_TARGET"
)

// Result is what a child reports.
type Result struct {
	// ID is the checkpoint a "put" child saved.
	ID string
	// Conflict is the conflict a "put" child got instead.
	Conflict *checkpoint.ConflictError
	// Saved and Conflicts count a "race" child's successful and conflicting
	// puts.
	Saved, Conflicts int
	// Err is any other error.
	Err string
}

// Main runs the child action named by the environment and exits, or returns
// when the process is not a child. open connects to the store named by
// target and returns the Saver with its closing function.
func Main(open func(ctx context.Context, target string) (checkpoint.Saver, func(), error)) {
	action := os.Getenv(envAction)
	if action == "" {
		return
	}
	ctx := context.Background()
	var res Result
	s, closeFn, err := open(ctx, os.Getenv(envTarget))
	if err != nil {
		res.Err = err.Error()
	} else {
		res = run(ctx, s, action, os.Args[len(os.Args)-2], os.Args[len(os.Args)-1])
		closeFn()
	}
	json.NewEncoder(os.Stdout).Encode(res)
	os.Exit(0)
}

func run(ctx context.Context, s checkpoint.Saver, action, thread, arg string) Result {
	var res Result
	switch action {
	case "put":
		// Put a child of arg, expecting arg to be the latest.
		cp := &checkpoint.Checkpoint{ThreadID: thread, ParentID: arg, Step: 1, Versions: map[string]uint64{"n": 2},
			Metadata: map[string]string{"pid": strconv.Itoa(os.Getpid())}}
		err := s.Put(ctx, arg, cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte("1")}}, nil)
		var ce *checkpoint.ConflictError
		switch {
		case err == nil:
			res.ID = cp.ID
		case errors.As(err, &ce):
			res.Conflict = ce
		default:
			res.Err = err.Error()
		}
	case "race":
		// Increment the counter channel "n" arg times, retrying on conflict.
		rounds, _ := strconv.Atoi(arg)
		for res.Saved < rounds {
			snap, err := s.Get(ctx, thread, "")
			if err != nil {
				res.Err = err.Error()
				return res
			}
			n, err := checkpoint.Decode[int](checkpoint.JSON, snap.Channels["n"].Base)
			if err != nil {
				res.Err = err.Error()
				return res
			}
			cp := &checkpoint.Checkpoint{ThreadID: thread, ParentID: snap.ID, Step: snap.Step + 1,
				Versions: map[string]uint64{"n": snap.Versions["n"] + 1}}
			err = s.Put(ctx, snap.ID, cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte(strconv.Itoa(n + 1))}}, nil)
			switch {
			case err == nil:
				res.Saved++
			case errors.Is(err, checkpoint.ErrConflict):
				res.Conflicts++
			default:
				res.Err = err.Error()
				return res
			}
		}
	default:
		res.Err = "unknown child action " + action
	}
	return res
}

// Child is a started child process.
type Child struct {
	cmd *exec.Cmd
	out bytes.Buffer
}

// Start starts a child that runs action on thread with arg against target.
func Start(t *testing.T, target, action, thread, arg string) *Child {
	t.Helper()
	c := &Child{cmd: exec.Command(os.Args[0], "-test.run=^$", thread, arg)}
	c.cmd.Env = append(os.Environ(), envAction+"="+action, envTarget+"="+target)
	c.cmd.Stdout = &c.out
	c.cmd.Stderr = os.Stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	return c
}

// Wait waits for the child and returns its result.
func (c *Child) Wait(t *testing.T) Result {
	t.Helper()
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, c.out.String())
	}
	var res Result
	if err := json.Unmarshal(c.out.Bytes(), &res); err != nil {
		t.Fatalf("child printed %q: %v", c.out.String(), err)
	}
	if res.Err != "" {
		t.Fatalf("child failed: %s", res.Err)
	}
	return res
}

// Run checks a durable Saver across processes: a checkpoint put by a child
// process makes the parent's Put expecting the old latest fail with a
// conflict naming the child's checkpoint, and children racing to increment
// a counter lose no update and leave a single line of history.
func Run(t *testing.T, s checkpoint.Saver, target string) {
	ctx := context.Background()
	first := &checkpoint.Checkpoint{ThreadID: "two", Versions: map[string]uint64{"n": 1}}
	if err := s.Put(ctx, "", first, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte("0")}}, nil); err != nil {
		t.Fatal(err)
	}
	res := Start(t, target, "put", "two", first.ID).Wait(t)
	if res.ID == "" {
		t.Fatalf("child did not save: %+v", res)
	}
	err := s.Put(ctx, first.ID, &checkpoint.Checkpoint{ThreadID: "two", ParentID: first.ID, Versions: map[string]uint64{"n": 2}},
		[]checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte("2")}}, nil)
	var ce *checkpoint.ConflictError
	if !errors.As(err, &ce) || *ce != (checkpoint.ConflictError{ThreadID: "two", Expected: first.ID, Actual: res.ID}) {
		t.Fatalf("parent Put after the child's: got %v; want a conflict naming the child's checkpoint %s", err, res.ID)
	}
	// The child's own second attempt, from the stale checkpoint, conflicts too.
	if again := Start(t, target, "put", "two", first.ID).Wait(t); again.Conflict == nil || again.Conflict.Actual != res.ID {
		t.Fatalf("second child from a stale checkpoint: %+v; want a conflict naming %s", again, res.ID)
	}

	const children, rounds = 3, 10
	start := &checkpoint.Checkpoint{ThreadID: "race", Versions: map[string]uint64{"n": 1}}
	if err := s.Put(ctx, "", start, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte("0")}}, nil); err != nil {
		t.Fatal(err)
	}
	var cs []*Child
	for range children {
		cs = append(cs, Start(t, target, "race", "race", strconv.Itoa(rounds)))
	}
	conflicts := 0
	for _, c := range cs {
		r := c.Wait(t)
		if r.Saved != rounds {
			t.Errorf("child saved %d; want %d", r.Saved, rounds)
		}
		conflicts += r.Conflicts
	}
	history, err := s.List(ctx, "race", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(history) != 1+children*rounds {
		t.Fatalf("history has %d checkpoints; want %d", len(history), 1+children*rounds)
	}
	for i := 0; i+1 < len(history); i++ {
		if history[i].ParentID != history[i+1].ID {
			t.Fatalf("history forks at %s", history[i].ID)
		}
	}
	snap, err := s.Get(ctx, "race", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(snap.Channels["n"].Base), fmt.Sprint(children*rounds); got != want {
		t.Errorf("counter = %s; want %s: an update was lost", got, want)
	}
	t.Logf("%d processes saved %d checkpoints with %d conflicts retried", children, children*rounds, conflicts)
}

// FirstStart starts several children at once on a store nobody has opened
// yet: each creates the schema if needed and tries to create the same
// thread. Every child must start cleanly, and exactly one must create the
// thread while the others get a conflict naming its checkpoint.
func FirstStart(t *testing.T, target string) {
	const children = 4
	var cs []*Child
	for range children {
		cs = append(cs, Start(t, target, "put", "fresh", ""))
	}
	var ids []string
	var conflicts []*checkpoint.ConflictError
	for _, c := range cs {
		r := c.Wait(t)
		if r.ID != "" {
			ids = append(ids, r.ID)
		} else {
			conflicts = append(conflicts, r.Conflict)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("%d children created the thread; want exactly 1", len(ids))
	}
	for _, ce := range conflicts {
		if ce == nil || ce.Actual != ids[0] || ce.Expected != "" {
			t.Errorf("conflict %+v; want expected \"\", actual %s", ce, ids[0])
		}
	}
}
