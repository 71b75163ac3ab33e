//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// idlePID runs a program on p and returns the pid of the worker that ran
// it, now idle.
func idlePID(t *testing.T, p *Pool) int {
	t.Helper()
	if _, err := p.Run(context.Background(), "x = 1", Options{}); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) != 1 {
		t.Fatalf("%d idle workers, want 1", len(p.idle))
	}
	return p.idle[0].cmd.Process.Pid
}

// A worker sees none of the host's descriptors and environment, and runs
// under its memory limit.
func TestWorkerIsolation(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	// A descriptor opened without close-on-exec, as C code might.
	fd, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	t.Setenv("SANDBOX_TEST_SECRET", "hunter2")

	p, err := NewPool(Config{Memory: 100 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pid := idlePID(t, p)

	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		switch {
		case e.Name() == "0" || e.Name() == "1":
			if !strings.HasPrefix(target, "pipe:") {
				t.Errorf("worker descriptor %s is %s, want a pipe", e.Name(), target)
			}
		case e.Name() == "2":
			if !strings.HasSuffix(target, ".stderr (deleted)") {
				t.Errorf("worker standard error is %s, want a removed file", target)
			}
		case !strings.HasPrefix(target, "anon_inode:"):
			t.Errorf("worker has descriptor %s -> %s", e.Name(), target)
		}
	}

	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(environ), "SANDBOX_TEST_SECRET") {
		t.Error("the worker inherited the host's environment")
	}
	if !strings.Contains(string(environ), "GOMEMLIMIT=") {
		t.Errorf("worker environment %q has no GOMEMLIMIT", environ)
	}

	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	base, err := vmData(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(limits), "\n") {
		if strings.HasPrefix(line, "Max data size") {
			var soft int64
			fmt.Sscan(strings.TrimPrefix(line, "Max data size"), &soft)
			// The limit is the footprint at start plus Memory; the host's
			// own footprint is of the same order.
			if soft < 100<<20 || soft > base+(100<<20)+(1<<30) {
				t.Errorf("worker data limit %d bytes (%s), want 100 MiB above its footprint", soft, line)
			}
		}
	}
	if !strings.Contains(string(limits), "Max data size") {
		t.Errorf("worker limits lack a data size:\n%s", limits)
	}
	for line := range strings.SplitSeq(string(limits), "\n") {
		if f := strings.Fields(line); len(f) > 3 && strings.Join(f[:3], " ") == "Max file size" && f[3] != "1048576" {
			t.Errorf("worker file size limit: %s", line)
		}
	}
}

// A worker serves the next run after a success and is replaced after it
// dies.
func TestWorkerReuse(t *testing.T) {
	p, err := NewPool(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	first := idlePID(t, p)
	if again := idlePID(t, p); again != first {
		t.Errorf("worker %d replaced by %d after a successful run", first, again)
	}
	if _, err := p.Run(context.Background(), `x = json.decode("[" * 3000000)`, Options{Modules: JSON}); err == nil {
		t.Fatal("deep nesting ran")
	}
	if fresh := idlePID(t, p); fresh == first {
		t.Errorf("worker %d still serves after it died", first)
	}
	if err := syscall.Kill(first, 0); err == nil {
		t.Errorf("worker %d still exists", first)
	}
}
