package graph_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// syncingSaver is the in-memory Saver made a checkpoint.Syncer: it logs
// each save ("put", "nosync", "writes", "nosync writes") and each Sync.
type syncingSaver struct {
	*checkpoint.Memory
	syncErr error
	// madeNoSync, if not nil, gets a value after the PutNoSync of the
	// checkpoint of step step (not of an earlier one, which would let a
	// test act before that save is made).
	madeNoSync chan struct{}
	// late, if not nil, gets a value once the checkpoint of step step is
	// stored by PutNoSync, which then returns only when its context is
	// done: a save that completes after the run gave up waiting for it.
	late chan struct{}
	step int
	mu   sync.Mutex
	log  []string
}

func (s *syncingSaver) note(what string) {
	s.mu.Lock()
	s.log = append(s.log, what)
	s.mu.Unlock()
}

func (s *syncingSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	s.note("put")
	return s.Memory.Put(ctx, expect, cp, blobs, writes)
}

func (s *syncingSaver) PutNoSync(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	s.note("nosync")
	err := s.Memory.Put(ctx, expect, cp, blobs, writes)
	if s.late != nil && cp.Step == s.step {
		s.late <- struct{}{}
		<-ctx.Done()
		return err
	}
	if s.madeNoSync != nil && cp.Step == s.step {
		select {
		case s.madeNoSync <- struct{}{}:
		default:
		}
	}
	return err
}

func (s *syncingSaver) PutWrites(ctx context.Context, thread, id string, writes []checkpoint.Write) error {
	s.note("writes")
	return s.Memory.PutWrites(ctx, thread, id, writes)
}

func (s *syncingSaver) PutWritesNoSync(ctx context.Context, thread, id string, writes []checkpoint.Write) error {
	s.note("nosync writes")
	return s.Memory.PutWrites(ctx, thread, id, writes)
}

// Sync fails on a done context, as a database's would.
func (s *syncingSaver) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		s.note("sync failed")
		return err
	}
	s.note("sync")
	return s.syncErr
}

var _ checkpoint.Syncer = (*syncingSaver)(nil)

// TestAsyncSyncsOncePerRun: with a Saver that is a checkpoint.Syncer, a run
// in DurabilityAsync makes its step saves without waiting for durability
// and syncs once, before Invoke returns, after its last save; a run in
// DurabilityStep never uses the NoSync methods.
func TestAsyncSyncsOncePerRun(t *testing.T) {
	ctx := context.Background()
	s := &syncingSaver{Memory: checkpoint.NewMemory()}
	out, err := longGraph(t, s, 0, graph.WithDurability(graph.DurabilityAsync)).Thread("a").Invoke(ctx, job{})
	if err != nil || out.N != longSteps {
		t.Fatalf("Invoke = N %d, %v; want %d, nil", out.N, err, longSteps)
	}
	counts := map[string]int{}
	for _, e := range s.log {
		counts[e]++
	}
	if counts["sync"] != 1 || s.log[len(s.log)-1] != "sync" {
		t.Errorf("saves %v: want exactly one Sync, after the last save", s.log)
	}
	if counts["nosync"] < longSteps {
		t.Errorf("%d PutNoSync for %d steps (log %v)", counts["nosync"], longSteps, s.log)
	}
	if counts["put"] > 1 {
		t.Errorf("%d synchronous Puts in an async run, want at most the first (log %v)", counts["put"], s.log)
	}

	s = &syncingSaver{Memory: checkpoint.NewMemory()}
	if _, err := longGraph(t, s, 0).Thread("s").Invoke(ctx, job{}); err != nil {
		t.Fatal(err)
	}
	for _, e := range s.log {
		if e != "put" && e != "writes" {
			t.Fatalf("DurabilityStep used %q (log %v)", e, s.log)
		}
	}
}

// TestAsyncSyncFails: a Sync that fails fails the run with its error, a
// *graph.CheckpointError of a save: the Sync's text may describe its
// database, and a caller that passes errors on tells it apart so.
func TestAsyncSyncFails(t *testing.T) {
	errSync := errors.New("fsync failed")
	s := &syncingSaver{Memory: checkpoint.NewMemory(), syncErr: errSync}
	_, err := longGraph(t, s, 0, graph.WithDurability(graph.DurabilityAsync)).Thread("a").Invoke(context.Background(), job{})
	if !errors.Is(err, errSync) {
		t.Fatalf("Invoke = %v, want the Sync's error", err)
	}
	var ce *graph.CheckpointError
	if !errors.As(err, &ce) || ce.Op != "save" || ce.Thread != "a" || !errors.Is(ce, errSync) {
		t.Fatalf("Invoke = %v (%T), want a *graph.CheckpointError of a save of thread \"a\" wrapping the Sync's error", err, err)
	}
}

// invokeCancelledAfter runs, on s in DurabilityAsync, a thread whose node
// "a" sets n and whose node "b" waits for ready (a save of s, after "a")
// and then cancels the run's context; it returns Invoke's error (want
// says what ready waits for, if it never comes).
func invokeCancelledAfter(t *testing.T, s *syncingSaver, ready <-chan struct{}, want string) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := graph.New[job]()
	g.AddNode("a", func(context.Context, job) (graph.Update[job], error) { return jobN.Set(1), nil })
	g.AddNode("b", func(ctx context.Context, _ job) (graph.Update[job], error) {
		select {
		case <-ready:
		case <-time.After(10 * time.Second):
			return graph.Update[job]{}, errors.New(want)
		}
		cancel()
		return graph.Update[job]{}, ctx.Err()
	})
	g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(s), graph.WithDurability(graph.DurabilityAsync))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Thread("c").Invoke(ctx, job{})
	return err
}

// TestAsyncSyncFailsAfterCancel: when the run's context is cancelled after
// its saves are made and their Sync then fails, the run's error is a
// *graph.CheckpointError wrapping the Sync's error, says that the saves
// may not be durable, and holds the Sync's text once (the note of the
// saves that may be lost does not repeat it).
func TestAsyncSyncFailsAfterCancel(t *testing.T) {
	errSync := errors.New("fsync failed on /var/lib/db")
	s := &syncingSaver{Memory: checkpoint.NewMemory(), syncErr: errSync, madeNoSync: make(chan struct{}, 1), step: 1}
	err := invokeCancelledAfter(t, s, s.madeNoSync, "no PutNoSync of step 1")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errSync) {
		t.Fatalf("Invoke = %v, want context.Canceled and the Sync's error", err)
	}
	var ce *graph.CheckpointError
	if !errors.As(err, &ce) || ce.Op != "save" || !errors.Is(ce, errSync) {
		t.Errorf("Invoke = %v, want a *graph.CheckpointError of a save wrapping the Sync's error", err)
	}
	if !strings.Contains(err.Error(), "durable") {
		t.Errorf("Invoke = %v, want it to say the saves may not be durable", err)
	}
	if n := strings.Count(err.Error(), errSync.Error()); n != 1 {
		t.Errorf("Invoke = %v: the Sync's text is there %d times, want once", err, n)
	}
}

// TestAsyncSaveDoneAfterCancelIsSynced: a save that completes after the
// run's context is cancelled, while the run waits for it, is not reported
// as possibly missing; it is synced like the others, and the Sync's
// failure is the run's.
func TestAsyncSaveDoneAfterCancelIsSynced(t *testing.T) {
	errSync := errors.New("fsync failed on /var/lib/db")
	s := &syncingSaver{Memory: checkpoint.NewMemory(), syncErr: errSync, late: make(chan struct{}, 1), step: 1}
	err := invokeCancelledAfter(t, s, s.late, "no PutNoSync of step 1")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errSync) {
		t.Fatalf("Invoke = %v, want context.Canceled and the Sync's error", err)
	}
	if strings.Contains(err.Error(), "saves completed") {
		t.Errorf("Invoke = %v: the save completed, yet the error says it may be missing", err)
	}
	s.mu.Lock()
	log := append([]string(nil), s.log...)
	s.mu.Unlock()
	if len(log) == 0 || log[len(log)-1] != "sync" {
		t.Errorf("saves %v: want the completed saves synced last", log)
	}
}

// TestAsyncSyncsAfterCancel: when the run's context is cancelled after its
// saves are made, the run still makes them durable (a Sync that does not
// fail for the cancellation), or its error says that they may not be.
func TestAsyncSyncsAfterCancel(t *testing.T) {
	s := &syncingSaver{Memory: checkpoint.NewMemory(), madeNoSync: make(chan struct{}, 1), step: 1}
	err := invokeCancelledAfter(t, s, s.madeNoSync, "no PutNoSync of step 1")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Invoke = %v, want context.Canceled", err)
	}
	s.mu.Lock()
	log := append([]string(nil), s.log...)
	s.mu.Unlock()
	synced := len(log) > 0 && log[len(log)-1] == "sync"
	if !synced && !strings.Contains(err.Error(), "may") {
		t.Errorf("saves %v, Invoke = %v: the saves were neither synced nor reported as possibly lost", log, err)
	}
}

// askAsync compiles, on s in DurabilityAsync, a graph whose node "a" sets
// n and whose node "ask" (which pauses) follows it.
func askAsync(t *testing.T, s *syncingSaver, ask func(context.Context, job) (graph.Update[job], error)) *graph.Compiled[job] {
	t.Helper()
	g := graph.New[job]()
	g.AddNode("a", func(context.Context, job) (graph.Update[job], error) { return jobN.Set(1), nil })
	g.AddNode("ask", ask)
	g.AddEdge(graph.START, "a").AddEdge("a", "ask").AddEdge("ask", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(s), graph.WithDurability(graph.DurabilityAsync))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAsyncSyncFailsAtPause: a run in DurabilityAsync that pauses and
// whose Sync then fails is not reported as a pause alone: Invoke's error
// holds the pause and the Sync's error, and Stream ends with that error,
// not with the interrupt event (the pause may not be kept). With a Sync
// that works, Stream ends with the interrupt event.
func TestAsyncSyncFailsAtPause(t *testing.T) {
	errSync := errors.New("fsync failed")
	s := &syncingSaver{Memory: checkpoint.NewMemory(), syncErr: errSync}
	c := askAsync(t, s, func(ctx context.Context, _ job) (graph.Update[job], error) {
		_, err := graph.Interrupt[string](ctx, "go on?")
		return graph.Update[job]{}, err
	})
	var err error
	ctx := context.Background()
	_, err = c.Thread("i").Invoke(ctx, job{})
	if !errors.Is(err, graph.ErrInterrupted) || !errors.Is(err, errSync) || !errors.As(err, new(*graph.CheckpointError)) {
		t.Fatalf("Invoke = %v, want the pause and the Sync's error, a *graph.CheckpointError", err)
	}
	last := func(thread string) (graph.Event[job], error) {
		var ev graph.Event[job]
		var err error
		for ev, err = range c.Thread(thread).Stream(ctx, job{}) {
			if err != nil {
				break
			}
		}
		return ev, err
	}
	ev, err := last("s")
	if !errors.Is(err, errSync) || !errors.As(err, new(*graph.CheckpointError)) {
		t.Fatalf("Stream ended with %v (mode %v), want the Sync's error, a *graph.CheckpointError", err, ev.Mode)
	}
	s.syncErr = nil
	if ev, err := last("ok"); err != nil || ev.Mode != graph.StreamInterrupt {
		t.Fatalf("Stream with a Sync that works ended with %v (mode %v), want the interrupt event", err, ev.Mode)
	}
}

// TestAsyncPauseSyncsOnce: a run in DurabilityAsync that pauses saves the
// pause, as its other saves, with PutNoSync and makes them durable with its
// one Sync after it (one flush, not a synchronous Put and a Sync), both when
// it paused after saves of its own and when a resumed run pauses again at
// once (its pause is then its only save, still synced).
func TestAsyncPauseSyncsOnce(t *testing.T) {
	s := &syncingSaver{Memory: checkpoint.NewMemory()}
	c := askAsync(t, s, func(ctx context.Context, _ job) (graph.Update[job], error) {
		if _, err := graph.Interrupt[string](ctx, "go on?"); err != nil {
			return graph.Update[job]{}, err
		}
		_, err := graph.Interrupt[string](ctx, "sure?")
		return graph.Update[job]{}, err
	})
	ctx := context.Background()
	for i, opts := range [][]graph.RunOption{nil, {graph.Resume("yes")}} {
		s.mu.Lock()
		s.log = nil
		s.mu.Unlock()
		if _, err := c.Thread("p").Invoke(ctx, job{}, opts...); !errors.Is(err, graph.ErrInterrupted) {
			t.Fatalf("run %d: Invoke = %v, want a pause", i, err)
		}
		s.mu.Lock()
		log := append([]string(nil), s.log...)
		s.mu.Unlock()
		counts := map[string]int{}
		for _, e := range log {
			counts[e]++
		}
		if counts["put"] != 0 || counts["sync"] != 1 || len(log) < 2 || log[len(log)-2] != "nosync" || log[len(log)-1] != "sync" {
			t.Errorf("run %d: saves %v; want the pause saved with PutNoSync, then one Sync, and no synchronous Put", i, log)
		}
	}
}
