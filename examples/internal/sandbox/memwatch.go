package sandbox

import (
	"runtime/metrics"
	"sync"
	"time"
)

// memoryPoll is how often a worker checks its memory during a run.
const memoryPoll = 5 * time.Millisecond

// goMemoryMetric is all the memory the Go runtime has mapped: heap,
// stacks and its own bookkeeping.
const goMemoryMetric = "/memory/classes/total:bytes"

// goMemory returns the bytes of goMemoryMetric.
func goMemory() uint64 {
	s := []metrics.Sample{{Name: goMemoryMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watchGoMemory calls exceeded once, with what is in use, when the Go
// runtime's memory passes limit bytes, checking every memoryPoll, until
// the returned function is called. It is the worker's memory limit where
// the operating system sets none: GOMEMLIMIT alone is soft.
func watchGoMemory(limit uint64, exceeded func(used uint64)) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(memoryPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if used := goMemory(); used > limit {
					exceeded(used)
					return
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}
