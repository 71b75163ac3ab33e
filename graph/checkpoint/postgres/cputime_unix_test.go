//go:build unix

package postgres_test

import "syscall"

// ownCPU returns the CPU time this process has used, in nanoseconds, or -1
// where the system does not report it.
func ownCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
