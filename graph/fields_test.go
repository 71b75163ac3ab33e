package graph_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
)

// digits is a reducer that tells a merge from a replace and keeps the
// order of writes: digits(digits(0, 1), 2) == 12.
func digits(old, new int) int { return old*10 + new }

// bigHandles declares a Reduce handle on every field of big, in field
// order or in reverse, so two processes may number big's fields
// differently.
func bigHandles(reverse bool) []*graph.Field[big, int] {
	hs := make([]*graph.Field[big, int], len(bigAcc))
	for i := range bigAcc {
		if reverse {
			i = len(bigAcc) - 1 - i
		}
		hs[i] = graph.Reduce(bigAcc[i], digits)
	}
	return hs
}

// bigGraph: a and b write every field of big in parallel with c, which
// pauses on an interrupt and, resumed, writes F150. runs counts a's and
// b's runs in this process.
func bigGraph(t testing.TB, saver checkpoint.Saver, hs []*graph.Field[big, int], runs *atomic.Int32) *graph.Compiled[big] {
	t.Helper()
	all := func(v int) graph.Update[big] {
		var u graph.Update[big]
		for _, h := range hs {
			u = graph.Updates(u, h.Set(v))
		}
		return u
	}
	own := make([]graph.Handle[big], len(hs))
	for i, h := range hs {
		own[i] = h
	}
	g := graph.New[big]().Handles(own...).
		AddNode("a", func(context.Context, big) (graph.Update[big], error) { runs.Add(1); return all(1), nil }).
		AddNode("b", func(context.Context, big) (graph.Update[big], error) { runs.Add(1); return all(2), nil }).
		AddNode("c", func(ctx context.Context, _ big) (graph.Update[big], error) {
			if _, err := graph.Interrupt[bool](ctx, "go on?"); err != nil {
				return graph.Update[big]{}, err
			}
			return hs[150].Set(3), nil
		})
	for _, n := range []string{"a", "b", "c"} {
		g.AddEdge(graph.START, n).AddEdge(n, graph.END)
	}
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLargeStateReduceResume runs a graph over a state of 300 fields, each
// with its own Reduce handle: a child process runs the parallel step until
// c pauses, saving a's and b's writes to all 300 fields as pending writes;
// this process, which numbers the fields in the other order, resumes the
// thread from SQLite and merges the saved writes through the Reduce
// handles without running a or b again.
func TestLargeStateReduceResume(t *testing.T) {
	ctx := context.Background()
	if os.Getenv(childMode) == "big" {
		saver, err := sqlite.New(ctx, sqlite.Config{Path: os.Getenv(childDB)})
		if err != nil {
			t.Fatal(err)
		}
		defer saver.Close()
		var runs atomic.Int32
		_, err = bigGraph(t, saver, bigHandles(true), &runs).Thread("big").Invoke(ctx, big{})
		var ie *graph.InterruptError
		if !errors.As(err, &ie) || runs.Load() != 2 {
			t.Fatalf("child: err = %v after %d runs of a and b, want an interrupt after 2", err, runs.Load())
		}
		return
	}
	db := filepath.Join(t.TempDir(), "cp.db")
	if err := runChild(t, "TestLargeStateReduceResume", "big", db, "").Run(); err != nil {
		t.Fatalf("child: %v", err)
	}
	saver, err := sqlite.New(ctx, sqlite.Config{Path: db})
	if err != nil {
		t.Fatal(err)
	}
	defer saver.Close()
	snap, err := saver.Get(ctx, "big", "")
	if err != nil {
		t.Fatal(err)
	}
	reduced := 0
	for _, w := range snap.Writes {
		if strings.Contains(w.Channel, "|reduce|") {
			reduced++
		}
	}
	if reduced != 2*len(bigAcc) {
		t.Fatalf("the paused step saved %d Reduce writes, want %d (a's and b's to every field)", reduced, 2*len(bigAcc))
	}
	var runs atomic.Int32
	hs := bigHandles(false)
	got, err := bigGraph(t, saver, hs, &runs).Thread("big").Invoke(ctx, big{}, graph.Resume(true))
	if err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("a and b ran %d times after the restart; their writes were saved", n)
	}
	for i, h := range hs {
		want := 12 // a's 1, then b's 2, through digits
		if i == 150 {
			want = 123 // and c's 3
		}
		if v := h.Value(got); v != want {
			t.Fatalf("%s = %d after the resume, want %d", h.Name(), v, want)
		}
	}
}

// TestReduceDeclaredRepeatedly declares Reduce handles in a loop, as a
// graph factory would: the same function gives the same handle, and
// handles made with new closures each time are garbage once unused, so
// the heap stays flat.
func TestReduceDeclaredRepeatedly(t *testing.T) {
	type st struct{ N, M int }
	acc := func(s *st) *int { return &s.N }
	first := graph.Reduce(acc, digits)
	for range 1000 {
		if h := graph.Reduce(acc, digits); h != first {
			t.Fatal("declaring a Reduce handle again with the same function made a new handle")
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	declare := func(n int) {
		for i := range n {
			k := i
			h := graph.Reduce(func(s *st) *int { return &s.M }, func(old, new int) int { return old + new + k })
			if got := graph.Updates(h.Set(1), h.Set(2)); got.Fields()[0] != "M" {
				t.Fatalf("fields %v", got.Fields())
			}
		}
	}
	declare(1000) // warm up
	before := heap()
	declare(100_000)
	after := heap()
	// 100,000 handles kept would hold over 20 MB.
	if after > before+2<<20 {
		t.Fatalf("heap grew from %d to %d bytes over 100,000 declarations", before, after)
	}
	runtime.KeepAlive(first)
}

// duo is a state type two graphs merge differently.
type duo struct {
	N   int
	Log []string
}

func maxOf(old, new int) int { return max(old, new) }

// minOf keeps the lowest value written, a zero N counting as none yet.
func minOf(old, new int) int {
	if old == 0 {
		return new
	}
	return min(old, new)
}

var (
	duoMax = graph.Reduce(func(s *duo) *int { return &s.N }, maxOf) // N's default handle
	duoMin = graph.Reduce(func(s *duo) *int { return &s.N }, minOf)
	duoLog = graph.Append(func(s *duo) *[]string { return &s.Log })
)

// duoGraph: a and b write N (3 and 7) in parallel with c, which pauses
// once; resumed, c logs "c".
func duoGraph(t testing.TB, saver checkpoint.Saver, n *graph.Field[duo, int], own bool) *graph.Compiled[duo] {
	t.Helper()
	write := func(v int) graph.NodeFunc[duo] {
		return func(context.Context, duo) (graph.Update[duo], error) { return n.Set(v), nil }
	}
	g := graph.New[duo]()
	if own {
		g.Handles(n)
	}
	g.AddNode("a", write(3)).AddNode("b", write(7)).
		AddNode("c", func(ctx context.Context, _ duo) (graph.Update[duo], error) {
			if _, err := graph.Interrupt[bool](ctx, "?"); err != nil {
				return graph.Update[duo]{}, err
			}
			return duoLog.Set([]string{"c"}), nil
		})
	for _, name := range []string{"a", "b", "c"} {
		g.AddEdge(graph.START, name).AddEdge(name, graph.END)
	}
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGraphsMergeOneFieldDifferently runs two checkpointed graphs over one
// state type, one keeping the highest N (the field's default handle), the
// other the lowest (its own handle, listed with Handles): each merges its
// nodes' writes, the pending writes it resumes after a pause (in a graph
// compiled anew) and a thread's input through its own reducer.
func TestGraphsMergeOneFieldDifferently(t *testing.T) {
	ctx := context.Background()
	saver := checkpoint.NewMemory()
	for _, tc := range []struct {
		name      string
		h         *graph.Field[duo, int]
		own       bool
		in        int // the thread's first input
		want      int // after the resumed step
		next      int // the next input
		wantAfter int
		applied   int // 4 merged into 5
	}{
		{"max", duoMax, false, 5, 7, 9, 9, 5},
		{"min", duoMin, true, 5, 3, 1, 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := duoGraph(t, saver, tc.h, tc.own).Thread(tc.name)
			var ie *graph.InterruptError
			if _, err := th.Invoke(ctx, duo{N: tc.in}); !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an interrupt", err)
			}
			// Resumed by a graph compiled anew: a's and b's saved writes
			// merge through this graph's reducer.
			got, err := duoGraph(t, saver, tc.h, tc.own).Thread(tc.name).Invoke(ctx, duo{}, graph.Resume(true))
			if err != nil || got.N != tc.want || !slices.Equal(got.Log, []string{"c"}) {
				t.Fatalf("resumed: %+v, %v; want N %d", got, err, tc.want)
			}
			// The next run's input merges through the graph's reducer too
			// (then a and b write 3 and 7 again, and c pauses).
			c := duoGraph(t, saver, tc.h, tc.own)
			if _, err := c.Thread(tc.name).Invoke(ctx, duo{N: tc.next}); !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an interrupt", err)
			}
			st, err := c.Thread(tc.name).State(ctx)
			if err != nil || st.Values.N != tc.wantAfter {
				t.Fatalf("state after the input %d: %+v, %v; want N %d", tc.next, st.Values, err, tc.wantAfter)
			}
			// Compiled.UpdateOf writes through the graph's handle.
			u, err := c.UpdateOf(duo{N: 4}, "N")
			if err != nil || u.String() != "{N:4}" {
				t.Fatalf("UpdateOf: %v, %v", u, err)
			}
			s := duo{N: 5}
			u.ApplyTo(&s)
			if s.N != tc.applied {
				t.Fatalf("UpdateOf's update merged 4 into 5 as %d, want %d", s.N, tc.applied)
			}
		})
	}
}

// keepFirst returns a reducer keeping the first value written unless a
// value reaches limit: every call returns another function value of one
// function literal, so their names are the same.
func keepFirst(limit int) func(old, new int) int {
	return func(old, new int) int {
		if old == 0 || new >= limit {
			return new
		}
		return old
	}
}

// TestHandlesErrors: a checkpointed graph writing a field through a Reduce
// handle other than its own on the field, whose function a restart could
// not tell from another (two closures of one literal), fails the run,
// naming the field and the fix, before anything is saved; Compile names a
// field listed twice with different reducers.
func TestHandlesErrors(t *testing.T) {
	ctx := context.Background()
	saver := checkpoint.NewMemory()
	var hs []*graph.Field[duo, int]
	for _, limit := range []int{10, 20} { // one call site: one name
		hs = append(hs, graph.Reduce(func(s *duo) *int { return &s.N }, keepFirst(limit)))
	}
	first := hs[0]
	_, err := duoGraph(t, saver, first, false).Thread("no-fields").Invoke(ctx, duo{})
	if err == nil || !strings.Contains(err.Error(), "field N") || !strings.Contains(err.Error(), "Handles") {
		t.Fatalf("err = %v, want an error naming field N and Handles", err)
	}
	if st, err := duoGraph(t, saver, first, true).Thread("no-fields").State(ctx); err != nil || st.Values.N != 0 {
		t.Fatalf("the failed run saved N = %d (%v); want nothing merged", st.Values.N, err)
	}
	// Listed as the graph's handle, the closure runs.
	var ie *graph.InterruptError
	if _, err := duoGraph(t, saver, first, true).Thread("listed").Invoke(ctx, duo{}); !errors.As(err, &ie) {
		t.Fatalf("err = %v, want the interrupt", err)
	}
	// Without a checkpointer nothing is saved, and the update's own
	// handle merges.
	c, err := graph.New[duo]().AddNode("a", func(context.Context, duo) (graph.Update[duo], error) { return duoMin.Set(2), nil }).
		AddEdge(graph.START, "a").AddEdge("a", graph.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	if s, err := c.Invoke(ctx, duo{N: 5}); err != nil || s.N != 2 {
		t.Fatalf("min through its own handle: %+v, %v; want N 2", s, err)
	}

	_, err = graph.New[duo]().Handles(duoMax, duoLog, duoMin).
		AddNode("a", func(context.Context, duo) (graph.Update[duo], error) { return graph.Update[duo]{}, nil }).
		AddEdge(graph.START, "a").Compile()
	if !errors.Is(err, graph.ErrInvalidGraph) || !strings.Contains(err.Error(), "field N") {
		t.Fatalf("Compile: %v, want an ErrInvalidGraph naming field N", err)
	}
	_, err = graph.New[duo]().Handles(nil).AddNode("a", func(context.Context, duo) (graph.Update[duo], error) { return graph.Update[duo]{}, nil }).
		AddEdge(graph.START, "a").Compile()
	if !errors.Is(err, graph.ErrInvalidGraph) || !strings.Contains(err.Error(), "nil") {
		t.Fatalf("Compile with a nil handle: %v", err)
	}
}

// tally has a Merge method.
type tally struct{ Calls, Tokens int }

func (t tally) Merge(o tally) tally { return tally{t.Calls + o.Calls, t.Tokens + o.Tokens} }

// alt is a state whose fields' default handles replace, while its nodes
// write through merging handles the graph does not hold.
type alt struct {
	Log []string
	N   int
	M   map[string]int
	U   tally
}

var (
	altLogR = graph.Replace(func(s *alt) *[]string { return &s.Log }) // the defaults
	altNR   = graph.Replace(func(s *alt) *int { return &s.N })
	altMR   = graph.Replace(func(s *alt) *map[string]int { return &s.M })
	altUR   = graph.Replace(func(s *alt) *tally { return &s.U })
	altLog  = graph.Append(func(s *alt) *[]string { return &s.Log })
	altN    = graph.Sum(func(s *alt) *int { return &s.N })
	altM    = graph.MergeMap(func(s *alt) *map[string]int { return &s.M })
	altU    = graph.Merge(func(s *alt) *tally { return &s.U })
)

// TestResumeWritesOfOtherHandles: writes saved through built-in handles
// that are not the graph's handles on their fields (append, sum, merge
// map and merge method over fields whose default replaces) merge by their
// own reducers when a graph compiled anew resumes them.
func TestResumeWritesOfOtherHandles(t *testing.T) {
	ctx := context.Background()
	saver := checkpoint.NewMemory()
	var runs atomic.Int32
	build := func() *graph.Compiled[alt] {
		write := func(name string, n int) graph.NodeFunc[alt] {
			return func(context.Context, alt) (graph.Update[alt], error) {
				runs.Add(1)
				return graph.Updates(altLog.Set([]string{name}), altN.Set(n), altM.Set(map[string]int{name: n}), altU.Set(tally{1, n})), nil
			}
		}
		g := graph.New[alt]().AddNode("a", write("a", 1)).AddNode("b", write("b", 2)).
			AddNode("c", func(ctx context.Context, _ alt) (graph.Update[alt], error) {
				_, err := graph.Interrupt[bool](ctx, "?")
				return graph.Update[alt]{}, err
			})
		for _, name := range []string{"a", "b", "c"} {
			g.AddEdge(graph.START, name).AddEdge(name, graph.END)
		}
		c, err := g.Compile(graph.WithCheckpointer(saver))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	in := alt{Log: []string{"x"}, N: 5, M: map[string]int{"x": 9}, U: tally{1, 10}}
	var ie *graph.InterruptError
	if _, err := build().Thread("alt").Invoke(ctx, in); !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an interrupt", err)
	}
	got, err := build().Thread("alt").Invoke(ctx, alt{}, graph.Resume(true))
	if err != nil {
		t.Fatal(err)
	}
	want := alt{Log: []string{"x", "a", "b"}, N: 8, M: map[string]int{"x": 9, "a": 1, "b": 2}, U: tally{3, 13}}
	if d := cmp.Diff(want, got); d != "" || runs.Load() != 2 {
		t.Fatalf("after the resume (-want +got):\n%s\na and b ran %d times, want 2", d, runs.Load())
	}
	_ = []any{altLogR, altNR, altMR, altUR}
}

// renaming is a Saver that rewrites the channels of the pending writes it
// saves, as a process built from other source (or an older version) would
// have named them.
type renaming struct {
	checkpoint.Saver
	rename func(string) string
}

func (r renaming) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	return r.Saver.Put(ctx, expect, cp, blobs, r.fix(writes))
}

func (r renaming) PutWrites(ctx context.Context, threadID, checkpointID string, writes []checkpoint.Write) error {
	return r.Saver.PutWrites(ctx, threadID, checkpointID, r.fix(writes))
}

func (r renaming) fix(ws []checkpoint.Write) []checkpoint.Write {
	out := slices.Clone(ws)
	for i := range out {
		out[i].Channel = r.rename(out[i].Channel)
	}
	return out
}

// TestResumeMergesWithTheSavedReduceFunction: a Reduce write is saved under
// its function's name, and a resume merges it with that function even when
// the resuming graph's handle on the field (here a process whose default or
// listed handle differs) is another Reduce; a saved function this program
// does not declare on the field fails the resume naming the field and the
// function; a write saved without the name (an older checkpoint) merges
// through the graph's handle, as before.
func TestResumeMergesWithTheSavedReduceFunction(t *testing.T) {
	ctx := context.Background()
	var (
		mu       sync.Mutex // parallel tasks save their writes at once
		channels []string
	)
	saver := checkpoint.NewMemory()
	record := renaming{Saver: saver, rename: func(ch string) string {
		if strings.HasPrefix(ch, "N|") {
			mu.Lock()
			channels = append(channels, ch)
			mu.Unlock()
		}
		return ch
	}}
	pause := func(t *testing.T, s checkpoint.Saver, thread string) {
		t.Helper()
		var ie *graph.InterruptError
		// a and b write 3 and 7 through N's default handle (max), saved
		// as pending writes while c pauses.
		if _, err := duoGraph(t, s, duoMax, false).Thread(thread).Invoke(ctx, duo{N: 5}); !errors.As(err, &ie) {
			t.Fatalf("err = %v, want an interrupt", err)
		}
	}

	t.Run("other handle resumes", func(t *testing.T) {
		pause(t, record, "other")
		if len(channels) == 0 || !strings.HasSuffix(channels[0], "N|reduce|github.com/agentgraph/agentgraph/graph_test.maxOf") {
			t.Fatalf("saved channels %q; want N|reduce|<package>.maxOf", channels)
		}
		// A graph whose handle on N is min resumes: the saved writes
		// still merge by max (5, 3, 7 -> 7), not by min (3).
		got, err := duoGraph(t, saver, duoMin, true).Thread("other").Invoke(ctx, duo{}, graph.Resume(true))
		if err != nil || got.N != 7 {
			t.Fatalf("resumed: %+v, %v; want N 7, merged by the saved maxOf", got, err)
		}
	})

	t.Run("missing function fails", func(t *testing.T) {
		gone := renaming{Saver: saver, rename: func(ch string) string {
			return strings.Replace(ch, "graph_test.maxOf", "graph_test.removedMax", 1)
		}}
		pause(t, gone, "missing")
		_, err := duoGraph(t, saver, duoMax, false).Thread("missing").Invoke(ctx, duo{}, graph.Resume(true))
		if err == nil || !strings.Contains(err.Error(), "field N") || !strings.Contains(err.Error(), "graph_test.removedMax") {
			t.Fatalf("err = %v; want one naming field N and the missing function removedMax", err)
		}
	})

	t.Run("old checkpoint falls back", func(t *testing.T) {
		old := renaming{Saver: saver, rename: func(ch string) string {
			if name, rest, ok := strings.Cut(ch, "|reduce|"); ok && rest != "" {
				return name + "|reduce"
			}
			return ch
		}}
		pause(t, old, "old")
		got, err := duoGraph(t, saver, duoMin, true).Thread("old").Invoke(ctx, duo{}, graph.Resume(true))
		if err != nil || got.N != 3 {
			t.Fatalf("resumed: %+v, %v; want N 3, merged by the graph's handle (min) as before", got, err)
		}
	})
}
