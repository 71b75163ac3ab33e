package ratelog_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentgraph/agentgraph/event/internal/ratelog"
)

// TestAllow lets the first occurrence through, then one an interval, with
// the count of those held back.
func TestAllow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l ratelog.Limiter
		if ok, n := l.Allow(); !ok || n != 0 {
			t.Fatalf("first Allow = %v, %d; want true, 0", ok, n)
		}
		for range 1000 {
			if ok, _ := l.Allow(); ok {
				t.Fatal("Allow let a second occurrence through within the interval")
			}
		}
		time.Sleep(ratelog.DefaultEvery)
		if ok, n := l.Allow(); !ok || n != 1000 {
			t.Fatalf("Allow after the interval = %v, %d; want true, 1000", ok, n)
		}
		l2 := ratelog.Limiter{Every: time.Minute}
		l2.Allow()
		time.Sleep(time.Second)
		if ok, _ := l2.Allow(); ok {
			t.Fatal("Allow ignored Every")
		}
	})
}
