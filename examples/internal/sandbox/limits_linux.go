//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"
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
//
// Where the kernel lets this process create user namespaces (unprivileged,
// or as root), the worker starts in a new user namespace, mapping only
// the host's own user and group, and a new network namespace, which has
// no interface but a loopback that is down: the worker reaches no
// network, holds no capability outside its namespace (so cannot raise its
// limits, even when the host runs as root), and cannot signal or trace
// processes outside it that it would not be allowed to as an unprivileged
// user. Where that is refused (user namespaces disabled, or filtered as in
// a container's default seccomp profile: EPERM, EINVAL, EUSERS) and the
// worker then starts without them, the refusal is remembered and workers
// start in the host's namespaces, logged once at Warn. ENOSPC (the user's
// namespaces are all in use) and EACCES are not remembered: that worker
// starts in the host's namespaces, logged. With require, a worker that
// cannot have its own namespaces fails to start instead. A new PID
// namespace is not used: the worker's watch of its host needs its real
// parent's pid.
func startProcess(ctx context.Context, cmd *exec.Cmd, log *zap.Logger, require bool) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	if noNamespaces.Load() {
		if require {
			return errors.New("sandbox: the kernel refuses workers their own user and network namespaces, and Config.RequireNamespaces is set; allow user namespaces or unset it")
		}
		return cmd.Start()
	}
	ns := *cmd
	ns.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
	}
	err := ns.Start()
	if err == nil {
		*cmd = ns
		return nil
	}
	refused := errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EUSERS)
	transient := errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EACCES)
	if !refused && !transient {
		return err
	}
	if require {
		return fmt.Errorf("sandbox: starting a worker in its own user and network namespaces failed, and Config.RequireNamespaces is set: %w", err)
	}
	if perr := cmd.Start(); perr != nil {
		// Not a matter of namespaces: nothing is remembered.
		return perr
	}
	if refused && !noNamespaces.Swap(true) {
		log.Warn("sandbox: workers start in the host's namespaces: creating a user and network namespace was refused", zap.Error(err))
	} else if transient {
		log.Warn("sandbox: a worker starts in the host's namespaces: creating a user and network namespace failed", zap.Error(err))
	}
	return nil
}

// noNamespaces is set once the kernel refused a worker new namespaces.
var noNamespaces atomic.Bool

// Bounds a worker sets on itself.
const (
	// workerFiles bounds a worker's open descriptors (RLIMIT_NOFILE): its
	// three standard ones, the Go runtime's few, a pidfd of the host and
	// /proc/self/status, read by watchMemory.
	workerFiles = 16
	// workerCPURuns is the CPU time a worker may use in its life, in runs
	// of Config.CPUTime: its hard RLIMIT_CPU. A worker with less than one
	// run's worth left retires after its run.
	workerCPURuns = 8
)

// hardenWorker drops what the worker does not need before it serves runs:
// it cannot gain privileges by exec (PR_SET_NO_NEW_PRIVS), opens at most
// workerFiles descriptors, and works in an empty directory that no longer
// exists, so it cannot create files by relative path. Its hard RLIMIT_CPU
// is workerCPURuns times the CPU time of a run (envCPU) from now, so
// raising its soft limit gains it little. RLIMIT_NPROC is not set: the
// kernel counts the threads the Go runtime needs against it, for all the
// processes of the user, and does not enforce it for root.
func hardenWorker() {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox worker: PR_SET_NO_NEW_PRIVS:", err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: workerFiles, Max: workerFiles}); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox worker: RLIMIT_NOFILE:", err)
	}
	if dir, err := os.MkdirTemp("", "sandbox-worker-*"); err == nil {
		if err := os.Chdir(dir); err != nil {
			fmt.Fprintln(os.Stderr, "sandbox worker: chdir:", err)
		}
		os.Remove(dir)
	}
	if seconds, err := strconv.ParseInt(os.Getenv(envCPU), 10, 64); err == nil && seconds > 0 {
		used := cpuUsed()
		hard := uint64(used + workerCPURuns*seconds)
		var lim syscall.Rlimit
		if syscall.Getrlimit(syscall.RLIMIT_CPU, &lim) == nil && hard < lim.Max {
			lim.Max = hard
			lim.Cur = min(lim.Cur, hard)
			if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &lim); err != nil {
				fmt.Fprintln(os.Stderr, "sandbox worker: RLIMIT_CPU:", err)
			}
		}
	}
}

// cpuUsed returns the CPU time the worker used, in whole seconds rounded
// up.
func cpuUsed() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Sec + ru.Stime.Sec + 1
}

// cpuSpent reports whether the worker has less than seconds of CPU time
// left under its hard RLIMIT_CPU: it retires rather than serve a run that
// could not use its whole CPUTime.
func cpuSpent(seconds int64) bool {
	var lim syscall.Rlimit
	if seconds <= 0 || syscall.Getrlimit(syscall.RLIMIT_CPU, &lim) != nil || lim.Max == unix.RLIM_INFINITY {
		return false
	}
	// A second to spare: a soft limit equal to the hard one makes the
	// kernel send SIGKILL, not SIGXCPU, which reads as a crash.
	return uint64(cpuUsed()+seconds+1) > lim.Max
}

// killedAtCPULimit reports whether a worker whose runs have seconds of CPU
// time each was killed by the kernel at its hard RLIMIT_CPU: by SIGKILL
// after about workerCPURuns runs' worth of CPU time. The kernel samples
// CPU time more coarsely than the rusage the host reads, which can come
// short of the limit: three quarters of it count.
func killedAtCPULimit(state *os.ProcessState, seconds int64) bool {
	return killedAfterCPU(state, time.Duration(workerCPURuns*seconds)*time.Second*3/4)
}

// killedAfterCPU reports whether state is of a process killed by SIGKILL
// after using at least cpu of CPU time.
func killedAfterCPU(state *os.ProcessState, cpu time.Duration) bool {
	if state == nil {
		return false
	}
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		return false
	}
	return state.UserTime()+state.SystemTime() >= cpu
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
// (RLIMIT_CPU, in whole seconds, soft limit, at most the hard one that
// hardenWorker set; SIGXCPU ends the worker, and the kernel kills it at
// the hard limit).
func setCPULimit(seconds int64) {
	if seconds <= 0 {
		return
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CPU, &lim); err != nil {
		return
	}
	lim.Cur = min(uint64(cpuUsed()+seconds), lim.Max)
	syscall.Setrlimit(syscall.RLIMIT_CPU, &lim)
}

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
