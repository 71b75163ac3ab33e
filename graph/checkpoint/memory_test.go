package checkpoint_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/checkpointtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemory(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return checkpoint.NewMemory() })
}

func TestMemoryZeroValue(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return new(checkpoint.Memory) })
}
