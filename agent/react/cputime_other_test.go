//go:build !unix

package react_test

import "time"

// cpuTime is unknown on this system: benchmarks report no CPU time.
func cpuTime() time.Duration { return 0 }
