package graph

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
)

type stackState struct {
	Moved []bool `json:"moved"`
}

var stackMoved = Append(func(s *stackState) *[]bool { return &s.Moved })

// deepCall goes depth frames of about 256 bytes deep.
//
//go:noinline
func deepCall(depth int) byte {
	var pad [256]byte
	pad[depth%len(pad)] = byte(depth)
	if depth == 0 {
		return pad[0]
	}
	return deepCall(depth-1) + pad[depth%len(pad)]
}

// A parallel task that makes its goroutine's stack grow marks its node
// deep; in later runs the workers make room before its tasks, so that
// they no longer grow the stack in the middle of their calls.
//
// The runtime starts goroutines with the average stack it scanned at the
// last garbage collection (GODEBUG adaptivestackstart): after other tests
// in this process, a fresh goroutine's stack may already hold the task's
// call. So the test runs again in a process of its own, where goroutines
// start with the smallest stack.
func TestDeepTasksRunOnGrownStacks(t *testing.T) {
	const child = "AGENTGRAPH_STACK_CHILD"
	if os.Getenv(child) == "" {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestDeepTasksRunOnGrownStacks$", "-test.count=1", "-test.v")
		godebug := "adaptivestackstart=0"
		if g := os.Getenv("GODEBUG"); g != "" {
			godebug = g + "," + godebug
		}
		cmd.Env = append(os.Environ(), child+"=1", "GODEBUG="+godebug)
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- PASS: TestDeepTasksRunOnGrownStacks")) {
			t.Fatalf("the test in a process of its own: %v\n%s", err, out)
		}
		return
	}
	g := New[stackState]()
	work := AddTask(g, "work", func(_ context.Context, _ int) (Update[stackState], error) {
		var probe byte
		at := stackAt(&probe)
		deepCall(24) // about 6 KiB: more than a fresh goroutine's stack
		return stackMoved.Set([]bool{stackAt(&probe) != at}), nil
	})
	g.AddConditionalEdges(START, func(context.Context, stackState) (Route, error) {
		return Route{}.Send(work.Send(1), work.Send(2), work.Send(3)), nil
	}, "work")
	g.AddEdge("work", END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	nd := c.nodes[c.index["work"]]
	// In a stream, a parallel step's tasks all run on fresh goroutines.
	run := func() []bool {
		var last stackState
		for ev, err := range c.Stream(context.Background(), stackState{}, WithModes(StreamValues)) {
			if err != nil {
				t.Fatal(err)
			}
			last = ev.State
		}
		if len(last.Moved) != 3 {
			t.Fatalf("%d results, want 3", len(last.Moved))
		}
		return last.Moved
	}
	first := run()
	if !nd.deep.Load() || !c.deep.Load() {
		t.Fatalf("the node (%v) or the graph (%v) is not marked deep after its tasks grew their stacks (moved: %v)", nd.deep.Load(), c.deep.Load(), first)
	}
	// A garbage collection may shrink a worker's stack between the room
	// it made and its task (a goroutine using under a quarter of its
	// stack gets half of it): a run during which one ran is tried again.
	for i, tries := 0, 0; i < 5; i++ {
		gcs := numGC()
		moved := run()
		if slices.Contains(moved, true) && numGC() != gcs && tries < 50 {
			tries++
			i--
			continue
		}
		for k, m := range moved {
			if m {
				t.Fatalf("run %d, task %d: the task's call grew its goroutine's stack; the worker should have made room first", i+2, k)
			}
		}
	}
}

// numGC returns the number of garbage collections completed.
func numGC() uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.NumGC
}
