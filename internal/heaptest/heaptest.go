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
