//go:build !linux

package sandbox

import (
	"context"
	"os/exec"
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

// watchMemory does nothing outside Linux.
func watchMemory() (stop func()) { return func() {} }

// startProcess starts cmd. Outside Linux nothing watches the host (see
// watchHost); the worker ends when its standard input does (readFrames).
func startProcess(_ context.Context, cmd *exec.Cmd) error { return cmd.Start() }

// watchHost does nothing outside Linux.
func watchHost() {}

// hardenWorker does nothing outside Linux.
func hardenWorker() {}

// cpuSpent is false outside Linux: there is no CPU time limit to spend.
func cpuSpent(int64) bool { return false }
