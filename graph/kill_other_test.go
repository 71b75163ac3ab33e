//go:build !unix

package graph_test

import "os"

// killProcess kills a process.
func killProcess(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
