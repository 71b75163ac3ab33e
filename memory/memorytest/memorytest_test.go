package memorytest_test

import (
	"testing"

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
