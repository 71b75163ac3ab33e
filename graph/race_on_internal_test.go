//go:build race

package graph

// raceOn says the tests run with the race detector, under which sync.Pool
// drops some of what it is given: a run then allocates a fresh run's
// bookkeeping at random, and allocation counts vary.
const raceOn = true
