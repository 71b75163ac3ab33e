// Package heaptest measures how much live heap a piece of code leaves
// behind, for tests that bound the memory of caches and maps keyed by
// input.
package heaptest

import "runtime"

// Live returns the bytes of live heap after a full collection.
func Live() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// Growth runs f and returns how much the live heap grew, zero if it
// shrank. Keep what f built reachable after Growth returns (for example
// with runtime.KeepAlive), or it is collected before the measurement.
func Growth(f func()) uint64 {
	before := Live()
	f()
	after := Live()
	if after < before {
		return 0
	}
	return after - before
}

// Allocated runs f tries times and returns the fewest bytes allocated
// during one run. The count is the process's (runtime.MemStats), which
// other goroutines (a test's HTTP server, parallel tests) add to; they
// only add, so the fewest of a few runs is f's own unless every run was
// disturbed. f must be repeatable.
func Allocated(tries int, f func()) uint64 {
	least := ^uint64(0)
	for range max(tries, 1) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}
