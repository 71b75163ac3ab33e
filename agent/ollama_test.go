package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/google/go-cmp/cmp"
)

// TestWireOllama runs langchaingo's Ollama client, built from OllamaConfig,
// against a server speaking Ollama's /api/chat (newline-delimited JSON).
func TestWireOllama(t *testing.T) {
	var got struct {
		Model    string `json:"model"`
		Format   any    `json:"format"`
		Stream   bool   `json:"stream"`
		Messages []struct{ Role, Content string }
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			http.NotFound(w, r)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, part := range []string{`{"action": "ANSWER", `, `"reasoning": "local", "response": "hi"}`} {
			fmt.Fprintf(w, `{"model":%q,"created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":%q},"done":false}`+"\n", got.Model, part)
		}
		fmt.Fprintf(w, `{"model":%q,"created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":true,"prompt_eval_count":31,"eval_count":12}`+"\n", got.Model)
	}))
	defer srv.Close()

	c := newClient(t, agent.Config{Ollama: &agent.OllamaConfig{Host: srv.URL}, Resilience: wirePolicy()})
	var chunks []string
	res, err := agent.Call[SupervisorDecision](context.Background(), c, "say hi", agent.WithModel("ollama:llama3.2"),
		agent.WithStreaming(func(_ context.Context, ch agent.Chunk) error { chunks = append(chunks, ch.Text); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.Response != "hi" {
		t.Errorf("value = %+v", res.Value)
	}
	if diff := cmp.Diff(agent.TokenUsage{InputTokens: 31, OutputTokens: 12}, res.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if got.Model != "llama3.2" || got.Format != "json" || !got.Stream || len(got.Messages) != 2 || got.Messages[0].Role != "system" {
		t.Errorf("request = %+v; want model llama3.2, JSON format, streaming, system + user messages", got)
	}
	if len(chunks) != 2 {
		t.Errorf("chunks = %q, want the 2 non-empty ones", chunks)
	}
}
