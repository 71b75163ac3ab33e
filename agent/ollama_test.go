package agent_test

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/google/go-cmp/cmp"
)

// TestWireOllama runs the Ollama provider built from OllamaConfig against a
// server speaking Ollama's OpenAI-compatible API (Host+"/v1"), streamed.
func TestWireOllama(t *testing.T) {
	m := llmtest.New(llmtest.Reply{Text: `{"action": "ANSWER", "reasoning": "local", "response": "hi"}`,
		Chunks: []string{`{"action": "ANSWER", `, `"reasoning": "local", "response": "hi"}`},
		Usage:  model.Usage{InputTokens: 31, OutputTokens: 12}})
	srv := llmtest.NewOpenAIServer(m)
	defer srv.Close()

	c := newClient(t, agent.Config{Ollama: &provider.OllamaConfig{Host: srv.URL}, Resilience: wirePolicy()})
	var chunks []string
	res, err := agent.Call[SupervisorDecision](context.Background(), c, "say hi", agent.WithModel("ollama:llama3.2"),
		agent.WithStreaming(func(_ context.Context, ch model.Chunk) error { chunks = append(chunks, ch.Text); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.Response != "hi" {
		t.Errorf("value = %+v", res.Value)
	}
	if diff := cmp.Diff(model.Usage{InputTokens: 31, OutputTokens: 12}, res.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	got := m.Calls()[0].Request
	if got.Model != "llama3.2" || got.ResponseFormat == nil || len(got.Messages) != 2 || got.Messages[0].Role != model.RoleSystem {
		t.Errorf("request = %+v; want model llama3.2, JSON format, system + user messages", got)
	}
	if len(chunks) != 2 {
		t.Errorf("chunks = %q, want the 2 non-empty ones", chunks)
	}
}
