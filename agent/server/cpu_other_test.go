//go:build !unix

package server_test

import "time"

// processCPU reports false: the benchmarks report no CPU time per run
// here.
func processCPU() (time.Duration, bool) { return 0, false }
