//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// osLimits says which limits the operating system enforces on workers.
const osLimits = true

// maxStderr bounds what a worker writes to its standard error, a file.
const maxStderr = 1 << 20

// limitWorker bounds the private writable memory of the worker pid
// (RLIMIT_DATA) to memory bytes above what it uses once started. The
// limit counts from the started footprint because that differs between
// builds: the race detector maps gigabytes of shadow memory at start.
// It also bounds the size of the files the worker writes (RLIMIT_FSIZE):
// its standard error is one.
// RLIMIT_AS is not used: the Go runtime reserves address space it never
// touches.
func limitWorker(pid int, memory int64) error {
	base, err := vmData(pid)
	if err != nil {
		return err
	}
	lim := uint64(base + memory)
	if err := unix.Prlimit(pid, unix.RLIMIT_DATA, &unix.Rlimit{Cur: lim, Max: lim}, nil); err != nil {
		return fmt.Errorf("prlimit RLIMIT_DATA on worker %d: %w", pid, err)
	}
	// The only file a worker writes is its standard error.
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: maxStderr, Max: maxStderr}, nil); err != nil {
		return fmt.Errorf("prlimit RLIMIT_FSIZE on worker %d: %w", pid, err)
	}
	return nil
}

// startProcess starts cmd as a worker, which ends when its host does
// (watchHost).
//
// PR_SET_PDEATHSIG (SysProcAttr.Pdeathsig) is not used: the kernel sends
// its signal when the thread that started the child ends, not the
// process, and the Go runtime ends a thread when a goroutine locked to it
// (runtime.LockOSThread) exits, which would kill live workers of a host
// that is still running. Starting every worker from one goroutine locked
// to its thread for the pool's life would need that goroutine to outlive
// the pool's idle workers, so the pool used by Run would keep it for the
// life of the process.
func startProcess(ctx context.Context, cmd *exec.Cmd) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	return cmd.Start()
}

// hostPoll is how often a worker checks that its host lives when the
// kernel has no pidfd (Linux before 5.3).
const hostPoll = 100 * time.Millisecond

// watchHost ends the worker (exit status 0) when its host process ends,
// even by SIGKILL and while something else holds the worker's standard
// input open; it does not depend on which of the host's threads started
// the worker. The host is the process whose pid envHost holds, which must
// be the worker's parent: a worker whose parent is another (the host died
// already, and the worker was given to init) ends at once, saying why on
// its standard error. The worker
// waits on a pidfd of the host, which the kernel makes readable when the
// whole process has ended, or, without pidfds, checks its parent every
// hostPoll.
func watchHost() {
	host, err := strconv.Atoi(os.Getenv(envHost))
	if err != nil || host < 1 {
		return // not started by a Pool of this version
	}
	if host == 1 {
		// The host is the first process of its PID namespace, as a
		// container's entrypoint is: when it ends the kernel kills the
		// worker with the rest of the namespace, so there is nothing to
		// watch. Nor could the parent check below tell it from init,
		// which a worker whose host died is given to.
		return
	}
	fd, err := unix.PidfdOpen(host, 0)
	// Checked after the open: while the host is the worker's parent, its
	// pid cannot name another process, so fd names the host.
	if ppid := unix.Getppid(); ppid != host {
		fmt.Fprintf(os.Stderr, "sandbox worker: parent is process %d, not host %d (%s): the host has ended; exiting\n", ppid, host, envHost)
		os.Exit(0)
	}
	if err != nil {
		go pollParent(host)
		return
	}
	go func() {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				pollParent(host)
			}
			os.Exit(0)
		}
	}()
}

// pollParent ends the worker when its parent is no longer host.
func pollParent(host int) {
	t := time.NewTicker(hostPoll)
	defer t.Stop()
	for range t.C {
		if unix.Getppid() != host {
			os.Exit(0)
		}
	}
}

// vmData returns the private writable memory of process pid, in bytes.
func vmData(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmData:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading VmData of worker %d: %w", pid, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmData in /proc/%d/status", pid)
}

// closeInherited closes the descriptors above standard error that the
// worker did not open itself. The Go runtime opens its own (an epoll and
// an eventfd, anonymous inodes) lazily; those are kept.
func closeInherited() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || strings.HasPrefix(target, "anon_inode:") {
			continue // gone (the directory's own descriptor) or the runtime's
		}
		syscall.Close(fd)
	}
}

// watchCPU ends the worker with exitCPU when it passes its CPU time limit.
// The Go runtime ignores SIGXCPU unless asked for it.
func watchCPU() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGXCPU)
	go func() {
		<-ch
		os.Stderr.WriteString("sandbox worker: cpu time limit\n")
		os.Exit(exitCPU)
	}()
}

// setCPULimit lets the worker use seconds more CPU time from now
// (RLIMIT_CPU, in whole seconds, soft limit; SIGXCPU ends the worker).
func setCPULimit(seconds int64) {
	if seconds <= 0 {
		return
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CPU, &lim); err != nil {
		return
	}
	used := ru.Utime.Sec + ru.Stime.Sec + 1
	lim.Cur = min(uint64(used+seconds), lim.Max)
	syscall.Setrlimit(syscall.RLIMIT_CPU, &lim)
}

// memoryPoll is how often a worker checks its memory during a run.
const memoryPoll = 5 * time.Millisecond

// watchMemory ends the worker with exitMemory when its private writable
// memory comes within a sixteenth of its RLIMIT_DATA, until the returned
// function is called. The limit alone is not enough: a Go runtime refused
// memory for its own bookkeeping may crash rather than report it.
func watchMemory() (stop func()) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &lim); err != nil || lim.Cur == unix.RLIM_INFINITY {
		return func() {}
	}
	threshold := int64(lim.Cur - lim.Cur/16)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(memoryPoll)
		defer t.Stop()
		pid := os.Getpid()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if used, err := vmData(pid); err == nil && used > threshold {
					fmt.Fprintf(os.Stderr, "sandbox worker: memory limit: %d bytes in use\n", used)
					os.Exit(exitMemory)
				}
			}
		}
	}()
	return func() { close(done) }
}
