//go:build !race

package graph

// raceOn says the tests run with the race detector (see the race build).
const raceOn = false
