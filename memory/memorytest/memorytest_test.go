package memorytest_test

import (
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/memory/memorytest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestInMemoryStore(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Store { return memory.NewInMemoryStore() })
}

func TestInMemoryItems(t *testing.T) {
	memorytest.RunItems(t, func(t *testing.T, now func() time.Time) memory.Items {
		return memory.NewInMemoryItems(memory.InMemoryItemsConfig{Now: now})
	})
}
