//go:build race

package graph

// raceEnabled says the tests run under the race detector, where sync.Pool
// drops pooled values at random.
const raceEnabled = true
