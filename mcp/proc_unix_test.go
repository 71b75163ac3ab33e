//go:build unix

package mcp_test

import (
	"errors"
	"syscall"
)

// pidGone reports whether a process no longer exists (reaped, not a zombie).
func pidGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// killPID kills a process.
func killPID(pid int) error {
	return syscall.Kill(pid, syscall.SIGKILL)
}
