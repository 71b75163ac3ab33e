package sandbox

import (
	"testing"
	"time"
)

// The worker's portable memory watch (its memory limit outside Linux)
// reports the Go runtime's memory once it passes the limit.
func TestWatchGoMemory(t *testing.T) {
	if goMemory() == 0 {
		t.Fatalf("%s reads 0", goMemoryMetric)
	}
	got := make(chan uint64, 1)
	stop := watchGoMemory(1, func(used uint64) { got <- used })
	defer stop()
	select {
	case used := <-got:
		if used <= 1 {
			t.Errorf("reported %d bytes in use", used)
		}
	case <-time.After(time.Minute):
		t.Fatal("the watch did not report memory over a limit of 1 byte")
	}

}
