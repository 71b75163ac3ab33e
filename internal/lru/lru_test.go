package lru_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/agentgraph/agentgraph/internal/heaptest"
	"github.com/agentgraph/agentgraph/internal/lru"
)

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	c := lru.New[string, int](2)
	c.GetOrAdd("a", func() int { return 1 })
	c.GetOrAdd("b", func() int { return 2 })
	c.Get("a") // b is now the least recently used
	c.GetOrAdd("c", func() int { return 3 })
	if _, ok := c.Get("b"); ok {
		t.Error("b is still cached; want it evicted")
	}
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Errorf("a = %d, %v; want 1, true", v, ok)
	}
	if got := c.GetOrAdd("c", func() int { t.Fatal("made c again"); return 0 }); got != 3 {
		t.Errorf("c = %d; want 3", got)
	}
	if c.Len() != 2 {
		t.Errorf("Len = %d; want 2", c.Len())
	}
}

// TestBoundedMemory: 100,000 distinct keys in a cache of 1,000 keep it
// under 1 MB.
func TestBoundedMemory(t *testing.T) {
	const bound = 1 << 20
	var c *lru.Cache[string, [64]byte]
	grew := heaptest.Growth(func() {
		c = lru.New[string, [64]byte](1000)
		for i := range 100_000 {
			c.GetOrAdd(fmt.Sprintf("key-%06d", i), func() [64]byte { return [64]byte{} })
		}
	})
	n := c.Len()
	runtime.KeepAlive(c)
	if n != 1000 || grew > bound {
		t.Errorf("after 100,000 keys: %d entries, %d bytes; want 1000 and under %d", n, grew, bound)
	}
}
