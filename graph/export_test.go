package graph

import (
	"testing"
	"time"
)

// MinAllocs returns the fewest allocations of one call of f over trials
// measured calls. Under the race detector sync.Pool drops pooled objects
// at random, and a garbage collection empties the pools, so a single
// call may allocate what a pool would have given back; the fewest over
// enough calls is the count with the pools kept.
func MinAllocs(trials int, f func()) float64 {
	least := testing.AllocsPerRun(1, f)
	for range trials - 1 {
		least = min(least, testing.AllocsPerRun(1, f))
	}
	return least
}

// SetSaveGrace sets how long the runs of c whose context is done still
// wait for each of their saves (abandonGrace by default): a test whose
// Saver is held until after the cancellation makes it long, so that the
// outcome does not depend on the machine's speed.
func SetSaveGrace[S any](c *Compiled[S], grace time.Duration) {
	c.dur.grace = grace
}
