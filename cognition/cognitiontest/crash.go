package cognitiontest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/memory"
)

// DurableStore is a store that is also a durable task queue, as those of
// packages cognition/sqlite and cognition/postgres are.
type DurableStore interface {
	cognition.Store
	cognition.TaskQueue
}

// OpenFunc opens the durable store at dsn (a file path or a connection
// string); the returned func releases it.
type OpenFunc func(ctx context.Context, dsn string) (DurableStore, func(), error)

const (
	crashEnv   = "AGENTGRAPH_COGNITION_CRASH_CHILD" // the DSN the child opens
	crashTurns = 6                                  // turns the child queues
	crashHeld  = 2                                  // tasks the child's workers claim before it is killed
)

// CrashChild runs the child process of [RunCrash] when the test binary was
// started as one, and then exits; otherwise it returns at once. Call it
// first thing in TestMain.
func CrashChild(open OpenFunc) {
	dsn := os.Getenv(crashEnv)
	if dsn == "" {
		return
	}
	ctx := context.Background()
	st, _, err := open(ctx, dsn)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	held := 0
	all := make(chan struct{})
	learner := cognition.LearnerFunc(func(_ context.Context, in cognition.LearnInput) (cognition.Learning, error) {
		mu.Lock()
		held++
		fmt.Printf("claimed %s\n", in.Interaction.Messages[0].Content)
		if held == crashHeld {
			close(all)
		}
		mu.Unlock()
		select {} // until the parent kills the process
	})
	svc, err := cognition.New(cognition.Config{Store: st, Tasks: st, Learner: learner, Workers: crashHeld, TaskLease: 2 * time.Second, TaskPoll: 10 * time.Millisecond})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	for i := range crashTurns {
		if err := svc.Observe(turn(i)); err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
	}
	<-all // every turn queued and two of them claimed
	fmt.Println("ready")
	select {}
}

func turn(i int) cognition.Interaction {
	return cognition.Interaction{UserID: fmt.Sprint("user", i%3), Messages: []memory.Message{
		{Role: memory.RoleUser, Content: fmt.Sprint("turn ", i)}, {Role: memory.RoleAssistant, Content: "ok"}}}
}

// RunCrash checks that learning survives a process killed with SIGKILL: a
// child process (this test binary, whose TestMain calls [CrashChild])
// queues turns on the store at dsn and claims some of them, and is killed
// while learning them; then two services in this process, sharing the
// store, learn every turn exactly once, the claimed ones after their
// leases end.
func RunCrash(t *testing.T, dsn string, open OpenFunc) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+dsn)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var claimed []string
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" {
			break
		}
		if s, ok := strings.CutPrefix(line, "claimed "); ok {
			claimed = append(claimed, s)
			continue
		}
		t.Fatalf("child: %s", line)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if len(claimed) != crashHeld {
		t.Fatalf("the child claimed %v before it was killed, want %d tasks", claimed, crashHeld)
	}

	st, release, err := open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	c, err := st.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c != (cognition.TaskCounts{Pending: crashTurns - crashHeld, Claimed: crashHeld}) {
		t.Fatalf("after the kill, Counts = %+v; want %d pending and %d claimed", c, crashTurns-crashHeld, crashHeld)
	}

	var mu sync.Mutex
	learned := map[string]int{}
	learner := cognition.LearnerFunc(func(_ context.Context, in cognition.LearnInput) (cognition.Learning, error) {
		mu.Lock()
		learned[in.Interaction.Messages[0].Content]++
		mu.Unlock()
		return cognition.Learning{}, nil
	})
	var svcs []*cognition.Service
	for range 2 {
		svc, err := cognition.New(cognition.Config{Store: st, Tasks: st, Learner: learner, Workers: 2, TaskPoll: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		svcs = append(svcs, svc)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for _, svc := range svcs {
		if err := svc.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, svc := range svcs {
		if err := svc.Close(t.Context()); err != nil {
			t.Error(err)
		}
	}
	for i := range crashTurns {
		if k := learned[fmt.Sprint("turn ", i)]; k != 1 {
			t.Errorf("turn %d learned %d times after the crash, want once", i, k)
		}
	}
	if len(learned) != crashTurns {
		t.Errorf("learned %v, want the %d turns", learned, crashTurns)
	}
	if c, err := st.Counts(t.Context()); err != nil || c != (cognition.TaskCounts{}) {
		t.Errorf("Counts after recovery = %+v, %v; want an empty queue", c, err)
	}
	id, err := st.Identity(t.Context(), cognition.DefaultAgent)
	if err != nil || id.Metrics.Turns != crashTurns {
		t.Errorf("identity after recovery = %+v, %v; want %d turns", id.Metrics, err, crashTurns)
	}
}
