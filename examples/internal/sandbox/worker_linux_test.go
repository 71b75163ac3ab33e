//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// hostEnv marks the test binary started by TestWorkerDiesWithHost as the
// host to kill.
const hostEnv = "SANDBOX_TEST_HOST"

// A worker dies with its host, even when the host is killed with SIGKILL
// and something else keeps the worker's standard input open.
func TestWorkerDiesWithHost(t *testing.T) {
	if os.Getenv(hostEnv) != "" {
		serveAsHost(t)
		return
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1) to hold the worker's standard input")
	}
	host := exec.Command(os.Args[0], "-test.run=^TestWorkerDiesWithHost$")
	host.Env = append(os.Environ(), hostEnv+"="+sleep)
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	hostIn, err := host.StdinPipe() // the host waits on it
	if err != nil {
		t.Fatal(err)
	}
	defer hostIn.Close()
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	var workerPID, holderPID int
	if _, err := fmt.Fscanf(bufio.NewReader(out), "worker %d holder %d\n", &workerPID, &holderPID); err != nil {
		host.Process.Kill()
		host.Wait()
		t.Fatalf("reading the host's worker: %v", err)
	}
	// pidfds name the worker and the holder for good: after the host dies
	// their pids may be reaped and reused. Until then the host, their
	// parent, keeps them from being reaped, so the raw pids are safe.
	var pidfd, holderFd int
	for _, c := range []struct {
		pid int
		fd  *int
	}{{workerPID, &pidfd}, {holderPID, &holderFd}} {
		fd, err := unix.PidfdOpen(c.pid, 0)
		if err != nil {
			syscall.Kill(holderPID, syscall.SIGKILL)
			syscall.Kill(workerPID, syscall.SIGKILL)
			host.Process.Kill()
			host.Wait()
			if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
				t.Skipf("pidfd_open: %v", err)
			}
			t.Fatalf("pidfd_open(%d): %v", c.pid, err)
		}
		*c.fd = fd
		t.Cleanup(func() {
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			unix.Close(fd)
		})
	}

	host.Process.Kill()
	host.Wait()
	waitExited(t, pidfd, fmt.Sprintf("worker %d lives on a minute after its host was killed", workerPID))
}

// waitExited waits until the process of pidfd has exited, for at most a
// minute (so that a regression fails rather than hangs); then it fails t
// with msg.
func waitExited(t *testing.T, pidfd int, msg string) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(time.Minute/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatal(msg)
		}
		return
	}
}

// serveAsHost starts a worker running an endless loop, gives the write
// end of its standard input to a sleep(1) so that it outlives this
// process, prints both pids, and waits to be killed.
func serveAsHost(t *testing.T) {
	p, err := NewPool(Config{CPUTime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	w := spinningWorker(t, p)
	holder := exec.Command(os.Getenv(hostEnv), "600")
	holder.ExtraFiles = []*os.File{w.in}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("worker %d holder %d\n", w.cmd.Process.Pid, holder.Process.Pid)
	io.Copy(io.Discard, os.Stdin) // until killed
}

// idleWorker returns the pid of p's one idle worker and a pidfd naming
// it, closed when t ends.
func idleWorker(t *testing.T, p *Pool) (pid, pidfd int) {
	t.Helper()
	p.mu.Lock()
	if len(p.idle) != 1 {
		p.mu.Unlock()
		t.Fatalf("%d idle workers, want 1", len(p.idle))
	}
	pid = p.idle[0].cmd.Process.Pid
	p.mu.Unlock()
	pidfd, err := unix.PidfdOpen(pid, 0) // the pool has not reaped it: pid is still its worker
	if err != nil {
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
			t.Skipf("pidfd_open: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(pidfd) })
	return pid, pidfd
}

// A worker started by a goroutine locked to its thread lives on when the
// goroutine exits and the runtime ends the thread (Linux sends
// PR_SET_PDEATHSIG when the thread that started a child ends, so the pool
// must not rely on it), and serves the next run.
func TestWorkerOutlivesStartingThread(t *testing.T) {
	p, err := NewPool(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// onThread runs a first run, so starts a worker, on a goroutine locked
	// to a thread that is not the main one: the runtime ends the thread
	// when the goroutine exits, but never the main thread.
	type started struct {
		tid int
		err error
	}
	done := make(chan started, 1)
	var onThread func()
	onThread = func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if unix.Gettid() == unix.Getpid() {
			done := make(chan struct{})
			go func() { defer close(done); onThread() }()
			<-done
			runtime.UnlockOSThread()
			return
		}
		_, err := p.Run(context.Background(), "x = 1", Options{})
		done <- started{unix.Gettid(), err}
	}
	go onThread()
	s := <-done
	if s.err != nil {
		t.Fatal(s.err)
	}
	pid, pidfd := idleWorker(t, p)
	// The thread is gone from /proc once it has ended, after the kernel
	// sent its children their death signals.
	task := fmt.Sprintf("/proc/self/task/%d", s.tid)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(task); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d still runs a minute after its goroutine exited", s.tid)
		}
	}
	res, err := p.Run(context.Background(), "x = 2", Options{Globals: []string{"x"}})
	if err != nil || res.Globals["x"] != "2" {
		t.Fatalf("the run after the starting thread ended = %v, %v", res.Globals, err)
	}
	if again, _ := idleWorker(t, p); again != pid {
		t.Errorf("worker %d was replaced by %d after the thread that started it ended; want it to live on", pid, again)
	}
	if n, err := unix.Poll([]unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}, 0); n != 0 || err != nil {
		t.Errorf("worker %d has exited (poll %d, %v); want it alive", pid, n, err)
	}
}

// A run that takes an idle worker that died (killed by someone) runs on a
// fresh worker instead of failing as a crash.
func TestRunAfterIdleWorkerDied(t *testing.T) {
	p, err := NewPool(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Run(context.Background(), "x = 1", Options{}); err != nil {
		t.Fatal(err)
	}
	pid, pidfd := idleWorker(t, p)
	if err := unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0); err != nil {
		t.Fatal(err)
	}
	waitExited(t, pidfd, fmt.Sprintf("worker %d lives on a minute after SIGKILL", pid))
	res, err := p.Run(context.Background(), "x = 2", Options{Globals: []string{"x"}})
	if err != nil || res.Globals["x"] != "2" {
		t.Fatalf("the run after the idle worker died = %v, %v", res.Globals, err)
	}
	if fresh, _ := idleWorker(t, p); fresh == pid {
		t.Errorf("idle worker after the run: %d, want a fresh one", fresh)
	}
}

// A worker whose parent is not the host it was given (the host died before
// the worker checked) exits at once with status 0 and says why on its
// standard error.
func TestWorkerOfAnotherParentSaysWhy(t *testing.T) {
	// The test's own parent (go test, or a shell) is not the worker's
	// parent: this process is.
	notParent := os.Getppid()
	if notParent <= 1 {
		t.Skip("this test process has no parent to name")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{envWorker + "=" + workerVersion, envHost + "=" + strconv.Itoa(notParent)}
	cmd.Stdin = strings.NewReader("") // a worker that did not exit would end with it
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("worker given host %d: %v; want exit status 0", notParent, err)
	}
	want := fmt.Sprintf("not host %d", notParent)
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("worker given host %d, not its parent, wrote %q to standard error; want the reason (%q)", notParent, stderr.String(), want)
	}
}

// A worker cannot gain privileges by exec, opens few descriptors, works in
// a removed directory, cannot raise its CPU limit for good, and, where
// user namespaces are allowed, has no network.
func TestWorkerHardened(t *testing.T) {
	p, err := NewPool(Config{CPUTime: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pid := idlePID(t, p)
	proc := func(name string) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if !strings.Contains(proc("status"), "NoNewPrivs:\t1") {
		t.Error("the worker lacks PR_SET_NO_NEW_PRIVS")
	}
	for line := range strings.SplitSeq(proc("limits"), "\n") {
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "Max open files") && (f[3] != "16" || f[4] != "16"):
			t.Errorf("worker descriptor limit: %s", line)
		case strings.HasPrefix(line, "Max cpu time"):
			if hard, err := strconv.Atoi(f[4]); err != nil || hard > 100 {
				t.Errorf("worker CPU limit: %s, want a hard limit of about %d s", line, workerCPURuns*2)
			}
		}
	}
	if cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); !strings.HasSuffix(cwd, "(deleted)") {
		t.Errorf("worker directory %s, want a removed one", cwd)
	}
	if noNamespaces.Load() {
		t.Skip("user namespaces are refused here: the worker shares the host's network; namespace checks skipped")
	}
	for _, ns := range []string{"net", "user"} {
		mine, _ := os.Readlink("/proc/self/ns/" + ns)
		its, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, ns))
		if mine == its {
			t.Errorf("the worker shares the host's %s namespace %s", ns, its)
		}
	}
	// The worker's program cannot reach the network: checked from a
	// process in its namespace.
	for _, tool := range []string{"nsenter", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the worker's network is not checked from inside its namespace", tool)
		}
	}
	cmd := exec.Command("nsenter", "-t", strconv.Itoa(pid), "-n", "ip", "-o", "link")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Skipf("cannot enter the worker's network namespace (entering needs root): nsenter: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "eth") || strings.Contains(string(out), "state UP") {
		t.Errorf("the worker's network namespace has interfaces:\n%s", out)
	}
}

// With Config.RequireNamespaces a worker runs in its own user and network
// namespaces, or does not run at all.
func TestRequireNamespaces(t *testing.T) {
	p, err := NewPool(Config{RequireNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Run(context.Background(), "result = 1", Options{Globals: []string{"result"}})
	if err != nil {
		if !strings.Contains(err.Error(), "RequireNamespaces") {
			t.Fatalf("a run refused namespaces failed with %v; want an error naming Config.RequireNamespaces", err)
		}
		t.Skipf("user namespaces are refused here: %v", err)
	}
	pid := idlePID(t, p)
	for _, ns := range []string{"net", "user"} {
		mine, _ := os.Readlink("/proc/self/ns/" + ns)
		its, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, ns))
		if err != nil || mine == its {
			t.Errorf("the worker's %s namespace %s, %v; want its own", ns, its, err)
		}
	}
}

// A process the kernel kills at its hard CPU limit (soft equal to hard:
// SIGKILL, not SIGXCPU) reads as killed at the CPU limit, not a crash.
func TestKilledAfterCPU(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh:", err)
	}
	cmd := exec.Command("sh", "-c", "ulimit -t 1; while :; do :; done")
	err := cmd.Run()
	if err == nil {
		t.Fatal("the busy loop ended by itself")
	}
	// The rusage read can come short of the 1 s the kernel counted.
	if !killedAfterCPU(cmd.ProcessState, 500*time.Millisecond) {
		t.Errorf("%v after %v of CPU: not read as killed at the CPU limit", cmd.ProcessState, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	if killedAfterCPU(cmd.ProcessState, time.Hour) {
		t.Error("read as killed after an hour of CPU")
	}
}
