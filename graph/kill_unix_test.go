//go:build unix

package graph_test

import "syscall"

// killProcess kills a process with SIGKILL.
func killProcess(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
