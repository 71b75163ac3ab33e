package cognitiontest_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/cognition/cognitiontest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestInMemoryStore(t *testing.T) {
	cognitiontest.Run(t, func(t *testing.T) cognition.Store { return cognition.NewInMemoryStore() })
}

func TestMemoryTaskQueue(t *testing.T) {
	cognitiontest.RunTaskQueue(t, func(t *testing.T) cognition.TaskQueue { return cognition.NewMemoryTaskQueue(0, nil) })
}
