package sandbox

import (
	"context"
	"errors"
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
