package memory_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/memory/memorytest"
)

func TestInMemoryStore(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Store { return memory.NewInMemoryStore() })
}
