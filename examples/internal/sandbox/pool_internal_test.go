package sandbox

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// BenchmarkExecuteInProcess is the interpreter alone, as runs went before
// they moved to workers: the baseline of BenchmarkRun.
func BenchmarkExecuteInProcess(b *testing.B) {
	o := &wireOptions{Filename: "code.star", Globals: []string{"result"}, MaxSteps: 1000, Timeout: int64(1e9), LoadError: ErrLoadDisabled.Error()}
	b.ReportAllocs()
	for b.Loop() {
		if _, werr := execute(context.Background(), "result = 6 * 7", o, nil); werr != nil {
			b.Fatal(werr.Msg)
		}
	}
}

// The wall-time kill stops what the interpreter's own checks cannot, such
// as one long built-in call. To see it, the host kills before the worker's
// own timer can fire.
func TestWallTimeKill(t *testing.T) {
	p, err := NewPool(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.grace = -5 * time.Millisecond
	_, err = p.Run(context.Background(), "while True:\n    pass\n", Options{Timeout: 10 * time.Millisecond})
	se, ok := err.(*Error)
	if !ok || se.Kind != KindTimeLimit || !errors.Is(se, context.DeadlineExceeded) || !strings.Contains(se.Msg, "its worker was stopped") {
		t.Fatalf("error %v, want a time limit that stopped the worker", err)
	}
	p.grace = killGrace
	if _, err := p.Run(context.Background(), "x = 1", Options{Timeout: time.Second}); err != nil {
		t.Errorf("the next run: %v", err)
	}
}

// spinningWorker starts a worker of p running an endless loop.
func spinningWorker(t *testing.T, p *Pool) *worker {
	t.Helper()
	w, err := p.start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	o := &wireOptions{Filename: "spin.star", LoadError: ErrLoadDisabled.Error(), MaxResult: DefaultMaxResult}
	if err := writeFrame(w.in, &message{Type: msgRun, Src: "while True:\n    pass\n", Opts: o}); err != nil {
		t.Fatal(err)
	}
	return w
}

// A worker whose standard input ends stops, even in the middle of a run:
// a host that dies takes its workers with it on every system.
func TestWorkerEndsWithStdin(t *testing.T) {
	p, err := NewPool(Config{CPUTime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	w := spinningWorker(t, p)
	exited := make(chan error, 1)
	go func() { exited <- w.cmd.Wait() }()
	w.in.Close()
	// Bounded, so that a regression fails rather than hangs.
	guard, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the worker ended with %v, want exit status 0", err)
		}
	case <-guard.Done():
		w.cmd.Process.Kill()
		<-exited
		t.Error("the worker ran on after its standard input ended")
	}
	w.outF.Close()
	w.stderr.Close()
	if w.stderrPath != "" {
		os.Remove(w.stderrPath)
	}
}

// The pool Run uses bounds the host function calls it leaves running.
func TestSharedPoolBoundsAbandoned(t *testing.T) {
	if got := sharedPool().cfg.MaxAbandoned; got != SharedMaxAbandoned || got <= 0 {
		t.Errorf("the shared pool's MaxAbandoned is %d, want SharedMaxAbandoned (%d)", got, SharedMaxAbandoned)
	}
}

// A MaxResult whose strings, once JSON-escaped, would not fit a frame the
// worker reads is refused, not left to crash the worker on the first large
// host function return.
func TestNewPoolRefusesMaxResultPastFrame(t *testing.T) {
	if 6*maxMaxResult > maxInbound {
		t.Fatalf("maxMaxResult %d: six times it passes maxInbound %d", maxMaxResult, maxInbound)
	}
	if _, err := NewPool(Config{MaxResult: maxMaxResult + 1}); err == nil || !strings.Contains(err.Error(), "Config.MaxResult") {
		t.Errorf("NewPool with MaxResult %d: %v; want an error naming Config.MaxResult", maxMaxResult+1, err)
	}
	p, err := NewPool(Config{MaxResult: maxMaxResult})
	if err != nil {
		t.Fatalf("NewPool with MaxResult %d: %v", maxMaxResult, err)
	}
	p.Close()
}
