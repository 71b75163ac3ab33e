//go:build unix

package react_test

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time. Benchmarks report it per
// operation beside wall time, which a loaded machine inflates.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
