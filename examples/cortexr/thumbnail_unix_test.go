//go:build unix

package cortexr_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/cortexr"
)

// A plan that asks for a thumbnail of a FIFO gets an error at once: the
// tool neither waits for a writer nor holds the run.
func TestThumbnailOfFIFO(t *testing.T) {
	t.Parallel()
	images := t.TempDir()
	fifo := filepath.Join(images, "fifo.png")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	plan := "def solve():\n    r = create_thumbnail(image_path='fifo.png')\n    return 'FINAL_ANSWER: ' + str(r)[:200]\n"
	m := llmtest.New().
		On("perception engine", llmtest.Text(`{"intent":"compute","entities":[],"selected_servers":["math"]}`)).
		On("Write a Starlark function", llmtest.Text(plan), llmtest.Text(plan))
	a := newAgent(t, cortexr.Config{Model: scripted(t, m), Lifelines: 1, MemoryDir: t.TempDir(), ImageDir: images,
		Limits: cortexr.Limits{Timeout: time.Minute}})
	t.Cleanup(func() {
		// Opening the write end frees a reader that waits, if one does,
		// before the agent closes (it waits for its tool calls).
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})

	// Bounded, so that a regression fails rather than hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan []string, 1)
	go func() {
		var errs []string
		for ev, err := range a.Run(ctx, "a thumbnail of fifo.png") {
			if err != nil {
				errs = append(errs, "Run: "+err.Error())
			} else if ev.Kind == cortexr.EventAction {
				errs = append(errs, ev.Error)
			}
		}
		done <- errs
	}()
	var errs []string
	select {
	case errs = <-done:
	case <-ctx.Done():
		t.Fatal("the run waited on the FIFO")
	}
	if ctx.Err() != nil {
		t.Fatal("the run waited on the FIFO until it was cancelled")
	}
	if len(errs) == 0 || !strings.Contains(errs[0], "is not a readable image file in the image directory") {
		t.Errorf("action errors %q, want the FIFO refused", errs)
	}
}
