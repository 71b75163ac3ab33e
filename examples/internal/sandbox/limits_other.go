//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"

	"go.uber.org/zap"
)

// osLimits says which limits the operating system enforces on workers:
// none outside Linux.
const osLimits = false

// limitWorker does nothing outside Linux: memory is bounded only by the
// worker's GOMEMLIMIT, which is soft.
func limitWorker(int, int64) error { return nil }

// closeInherited does nothing outside Linux, where os/exec passes only
// the standard descriptors.
func closeInherited() {}

// watchCPU does nothing outside Linux.
func watchCPU() {}

// setCPULimit does nothing outside Linux: the wall-time kill bounds CPU.
func setCPULimit(int64) {}

// goMemoryBase is the worker's Go memory when it first ran a program:
// Config.Memory counts from there.
var goMemoryBase = sync.OnceValue(goMemory)

// watchMemory ends the worker with exitMemory when the Go runtime's
// memory comes within a sixteenth of Config.Memory (envMemory) above its
// footprint at its first run, until the returned function is called.
// Outside Linux nothing else bounds it: GOMEMLIMIT is soft.
func watchMemory() (stop func()) {
	memory, err := strconv.ParseInt(os.Getenv(envMemory), 10, 64)
	if err != nil || memory <= 0 {
		return func() {}
	}
	limit := goMemoryBase() + uint64(memory-memory/16)
	return watchGoMemory(limit, func(used uint64) {
		fmt.Fprintf(os.Stderr, "sandbox worker: memory limit: %d bytes in use\n", used)
		os.Exit(exitMemory)
	})
}

// startProcess starts cmd. Outside Linux nothing watches the host (see
// watchHost); the worker ends when its standard input does (readFrames).
// Workers have no namespaces of their own: with require, none starts.
func startProcess(_ context.Context, cmd *exec.Cmd, _ *zap.Logger, require bool) error {
	if require {
		return errors.New("sandbox: Config.RequireNamespaces is set, and workers start in their own namespaces only on Linux; unset it")
	}
	return cmd.Start()
}

// watchHost does nothing outside Linux.
func watchHost() {}

// hardenWorker does nothing outside Linux.
func hardenWorker() {}

// cpuSpent is false outside Linux: there is no CPU time limit to spend.
func cpuSpent(int64) bool { return false }

// killedAtCPULimit is false outside Linux: no hard CPU limit is set.
func killedAtCPULimit(*os.ProcessState, int64) bool { return false }
