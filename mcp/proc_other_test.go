//go:build !unix

package mcp_test

import "os"

// pidGone reports whether a process no longer exists.
func pidGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	p.Release()
	return false
}

// killPID kills a process.
func killPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
