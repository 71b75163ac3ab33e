package graph_test

// The four engine workloads W1-W4, exactly as specified for every engine
// compared in BENCHMARKS.md. Each graph is compiled once, outside the timed
// loop, and each result is checked before timing.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
)

// W1: START -> a -> b -> c -> END; each node appends its name to Log and
// sets N = N+1.

type chainState struct {
	Log []string
	N   int
}

var (
	chainLog = graph.Append(func(s *chainState) *[]string { return &s.Log })
	chainN   = graph.Replace(func(s *chainState) *int { return &s.N })
)

func buildW1() (*graph.Compiled[chainState], error) { return buildW1With() }

func buildW1With(opts ...graph.CompileOption) (*graph.Compiled[chainState], error) {
	g := graph.New[chainState]()
	for _, name := range []string{"a", "b", "c"} {
		g.AddNode(name, func(_ context.Context, s chainState) (graph.Update[chainState], error) {
			return graph.Updates(chainLog.Set([]string{name}), chainN.Set(s.N+1)), nil
		})
	}
	g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", graph.END)
	return g.Compile(opts...)
}

func checkW1(s chainState) error {
	if s.N != 3 || !slices.Equal(s.Log, []string{"a", "b", "c"}) {
		return fmt.Errorf("W1: want N=3 Log=[a b c], got N=%d Log=%v", s.N, s.Log)
	}
	return nil
}

// W2: START -> fan -> w0..w99 -> join -> END; each wi appends "wi".

const fanWidth = 100

type fanState struct {
	Log []string
}

var fanLog = graph.Append(func(s *fanState) *[]string { return &s.Log })

func buildW2() (*graph.Compiled[fanState], error) {
	g := graph.New[fanState]()
	noop := func(context.Context, fanState) (graph.Update[fanState], error) { return graph.Update[fanState]{}, nil }
	g.AddNode("fan", noop).AddNode("join", noop)
	g.AddEdge(graph.START, "fan").AddEdge("join", graph.END)
	for i := range fanWidth {
		name := "w" + strconv.Itoa(i)
		g.AddNode(name, func(context.Context, fanState) (graph.Update[fanState], error) {
			return fanLog.Set([]string{name}), nil
		})
		g.AddEdge("fan", name).AddEdge(name, "join")
	}
	return g.Compile()
}

func checkW2(s fanState) error {
	if len(s.Log) != fanWidth {
		return fmt.Errorf("W2: want %d entries, got %d", fanWidth, len(s.Log))
	}
	for i, v := range s.Log {
		if want := "w" + strconv.Itoa(i); v != want {
			return fmt.Errorf("W2: Log[%d] = %q, want %q (declaration order)", i, v, want)
		}
	}
	return nil
}

// W3: START -> inc; inc sets N = N+1; inc routes back to itself while
// N < 1000, then to END.

const loopSteps = 1000

type loopState struct {
	N int
}

var loopN = graph.Replace(func(s *loopState) *int { return &s.N })

func buildW3(opts ...graph.CompileOption) (*graph.Compiled[loopState], error) {
	g := graph.New[loopState]()
	g.AddNode("inc", func(_ context.Context, s loopState) (graph.Update[loopState], error) {
		return loopN.Set(s.N + 1), nil
	})
	g.AddEdge(graph.START, "inc")
	g.AddConditionalEdges("inc", func(_ context.Context, s loopState) (graph.Route, error) {
		if s.N < loopSteps {
			return graph.To("inc"), nil
		}
		return graph.To(graph.END), nil
	}, "inc", graph.END)
	return g.Compile(append([]graph.CompileOption{graph.WithStepLimit(loopSteps)}, opts...)...)
}

func checkW3(s loopState) error {
	if s.N != loopSteps {
		return fmt.Errorf("W3: want N=%d, got %d", loopSteps, s.N)
	}
	return nil
}

// W4: a router from START sends 1000 tasks to work, each with input x;
// work returns Out = [x*2]; work -> END.

const mapTasks = 1000

type mapState struct {
	In  []int
	Out []int
}

var mapOut = graph.Append(func(s *mapState) *[]int { return &s.Out })

func buildW4() (*graph.Compiled[mapState], error) {
	g := graph.New[mapState]()
	work := graph.AddTask(g, "work", func(_ context.Context, x int) (graph.Update[mapState], error) {
		return mapOut.Set([]int{x * 2}), nil
	})
	g.AddConditionalEdges(graph.START, func(_ context.Context, s mapState) (graph.Route, error) {
		sends := make([]graph.Send, len(s.In))
		for i, x := range s.In {
			sends[i] = work.Send(x)
		}
		return graph.Dispatch(sends...), nil
	}, "work")
	g.AddEdge("work", graph.END)
	return g.Compile()
}

func mapInput() mapState {
	in := make([]int, mapTasks)
	for i := range in {
		in[i] = i
	}
	return mapState{In: in}
}

func checkW4(s mapState) error {
	if len(s.Out) != mapTasks {
		return fmt.Errorf("W4: want %d outputs, got %d", mapTasks, len(s.Out))
	}
	for i, v := range s.Out {
		if v != 2*i {
			return fmt.Errorf("W4: Out[%d] = %d, want %d (send order)", i, v, 2*i)
		}
	}
	return nil
}

func benchWorkload[S any](b *testing.B, build func() (*graph.Compiled[S], error), input func() S, check func(S) error) {
	g, err := build()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	out, err := g.Invoke(ctx, input())
	if err != nil {
		b.Fatal(err)
	}
	if err := check(out); err != nil {
		b.Fatal(err)
	}
	in := input()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := g.Invoke(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkW1Chain runs W1 without a checkpointer (none) and with each
// checkpointer, on a new thread per run: an input checkpoint and one per
// step, four Puts per run.
func BenchmarkW1Chain(b *testing.B) {
	b.Run("none", func(b *testing.B) {
		benchWorkload(b, buildW1, func() chainState { return chainState{} }, checkW1)
	})
	b.Run("memory", func(b *testing.B) { benchW1Durable(b, checkpoint.NewMemory()) })
	b.Run("sqlite", func(b *testing.B) {
		s, err := sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(b.TempDir(), "w1.db")})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchW1Durable(b, s)
	})
	b.Run("postgres", func(b *testing.B) {
		s := pgSaver(b, pgTestSchema)
		benchW1Durable(b, s)
	})
	// PostgreSQL without waiting for each commit's flush to disk: a crash of
	// the server (not of this process) may lose the last commits.
	b.Run("postgres-async", func(b *testing.B) {
		s := pgSaverWith(b, postgres.Config{Schema: pgTestSchema, AsyncCommit: true})
		benchW1Durable(b, s)
	})
}

// BenchmarkW1Durability runs W1 on SQLite and on PostgreSQL, a new thread
// per run, in each durability mode: step and async save an input
// checkpoint and one per step (four Puts per run), exit one Put per run.
// ms/checkpoint is the run's time divided by four, the per-step cost of a
// checkpoint (the engine's own part is under a microsecond).
func BenchmarkW1Durability(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) checkpoint.Saver
	}{
		{"sqlite", func(b *testing.B) checkpoint.Saver {
			s, err := sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(b.TempDir(), "w1.db")})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
		{"postgres", func(b *testing.B) checkpoint.Saver { return pgSaver(b, pgTestSchema) }},
	}
	for _, be := range backends {
		for _, d := range []graph.Durability{graph.DurabilityStep, graph.DurabilityAsync, graph.DurabilityExit} {
			b.Run(be.name+"/"+d.String(), func(b *testing.B) {
				benchW1Durable(b, be.open(b), graph.WithDurability(d))
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/4/1e6, "ms/checkpoint")
			})
		}
	}
}

func benchW1Durable(b *testing.B, saver checkpoint.Saver, opts ...graph.CompileOption) {
	g, err := buildW1With(append([]graph.CompileOption{graph.WithCheckpointer(saver)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	prefix := fmt.Sprintf("w1-%d-%d-", os.Getpid(), time.Now().UnixNano())
	ctx := onThread(prefix + "check")
	out, err := g.Invoke(ctx, chainState{})
	if err != nil {
		b.Fatal(err)
	}
	if err := checkW1(out); err != nil {
		b.Fatal(err)
	}
	threads := []string{prefix + "check"}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		thread := prefix + strconv.Itoa(i)
		if _, err := g.Invoke(graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: thread}), chainState{}); err != nil {
			b.Fatal(err)
		}
		threads = append(threads, thread)
		// Delete the threads, untimed, every benchDeleteEvery runs, so
		// that the heap and the tables do not grow with b.N. Not after
		// every run: stopping the timer reads the memory statistics,
		// which empties the allocator's per-CPU caches, and every run
		// would then pay to refill them.
		if len(threads) == benchDeleteEvery {
			b.StopTimer()
			deleteThreads(b, saver, threads)
			threads = threads[:0]
			b.StartTimer()
		}
	}
	b.StopTimer()
	deleteThreads(b, saver, threads)
}

const benchDeleteEvery = 256

func deleteThreads(b *testing.B, saver checkpoint.Saver, threads []string) {
	for _, th := range threads {
		if err := saver.DeleteThread(context.Background(), th); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkW3LoopMemory runs W3 (1000 steps in one run) with the in-memory
// checkpointer on a new thread per op: the cost of a checkpoint per step
// once a run is going, without W1's per-run load and input checkpoint.
// Compare its ns/step with BenchmarkW3Loop's.
func BenchmarkW3LoopMemory(b *testing.B) {
	saver := checkpoint.NewMemory()
	g, err := buildW3(graph.WithCheckpointer(saver))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		thread := "w3-" + strconv.Itoa(i)
		out, err := g.Invoke(graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: thread}), loopState{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := checkW3(out); err != nil {
			b.Fatal(err)
		}
		if err := saver.DeleteThread(context.Background(), thread); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*loopSteps), "ns/step")
}

// chatMsg and chatLike make a chat-like state: a growing message list, a
// token counter and a scratch field.
type chatMsg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatLike struct {
	Messages []chatMsg
	Tokens   int
	Scratch  string
}

var (
	clMessages = graph.Append(func(s *chatLike) *[]chatMsg { return &s.Messages })
	clTokens   = graph.Sum(func(s *chatLike) *int { return &s.Tokens })
	clScratch  = graph.Replace(func(s *chatLike) *string { return &s.Scratch })
)

// BenchmarkCheckpointBytes runs a chat-like thread of b.N steps, each
// appending one message of about 200 bytes, and reports the bytes stored
// per checkpoint beside the size of the whole state at the end.
func BenchmarkCheckpointBytes(b *testing.B) {
	saver := checkpoint.NewMemory()
	content := strings.Repeat("lorem ipsum ", 16)
	c := untilGraph(b, saver, b.N, "turn", func(_ context.Context, s chatLike) (graph.Update[chatLike], error) {
		role := "user"
		if len(s.Messages)%2 == 1 {
			role = "assistant"
		}
		return graph.Updates(clMessages.Set([]chatMsg{{Role: role, Content: content}}), clTokens.Set(48), clScratch.Set(role)), nil
	}, func(s chatLike) bool { return len(s.Messages) >= b.N })
	out := checkpointBytes(b, c, saver, chatLike{})
	u, err := saver.Usage(context.Background(), "chat")
	if err != nil {
		b.Fatal(err)
	}
	whole, _ := json.Marshal(out)
	b.ReportMetric(float64(len(whole)), "state-B")
	b.ReportMetric(float64(u.BlobBytes)/float64(len(whole)), "stored/state")
}

func BenchmarkW2FanOut(b *testing.B) {
	benchWorkload(b, buildW2, func() fanState { return fanState{} }, checkW2)
}

func BenchmarkW3Loop(b *testing.B) {
	benchWorkload(b, func() (*graph.Compiled[loopState], error) { return buildW3() }, func() loopState { return loopState{} }, checkW3)
}

func BenchmarkW4Send(b *testing.B) {
	benchWorkload(b, buildW4, mapInput, checkW4)
}

// TestWorkloads checks every workload's result, so a broken engine fails
// the tests and not only the benchmarks.
func TestWorkloads(t *testing.T) {
	ctx := context.Background()
	t.Run("W1", func(t *testing.T) { runWorkload(t, ctx, buildW1, chainState{}, checkW1) })
	t.Run("W2", func(t *testing.T) { runWorkload(t, ctx, buildW2, fanState{}, checkW2) })
	t.Run("W3", func(t *testing.T) {
		runWorkload(t, ctx, func() (*graph.Compiled[loopState], error) { return buildW3() }, loopState{}, checkW3)
	})
	t.Run("W4", func(t *testing.T) { runWorkload(t, ctx, buildW4, mapInput(), checkW4) })
}

func runWorkload[S any](t *testing.T, ctx context.Context, build func() (*graph.Compiled[S], error), in S, check func(S) error) {
	t.Helper()
	g, err := build()
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := check(out); err != nil {
		t.Error(err)
	}
}
