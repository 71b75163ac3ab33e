package agent_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newClient(t testing.TB, cfg agent.Config) *agent.Client {
	t.Helper()
	c, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustRegistry(t testing.TB, specs ...agent.ModelSpec) *agent.Registry {
	t.Helper()
	r, err := agent.NewRegistry(specs...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func toolCall(name, args string) model.ToolCall {
	return llmtest.ToolCall("call_1", name, args)
}
