//go:build !unix

package postgres_test

// ownCPU returns -1: this system does not report a process's CPU time here.
func ownCPU() int64 { return -1 }
