package documenttest_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/document/documenttest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemoryStore(t *testing.T) {
	documenttest.Run(t, func(*testing.T) document.Store { return document.NewMemoryStore() })
}
