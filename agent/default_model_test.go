package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
)

// clearProviderEnv unsets the variables ConfigFromEnv reads, for the test.
func clearProviderEnv(t *testing.T) {
	for _, k := range []string{agent.EnvOpenAIKey, agent.EnvOpenAIBaseURL, agent.EnvOpenAIOrg, agent.EnvAnthropicKey,
		agent.EnvAnthropicURL, agent.EnvOllamaHost, agent.EnvDefaultModel, agent.EnvModelAliases} {
		t.Setenv(k, "")
	}
}

// ollamaServer answers Ollama's OpenAI-compatible chat completions API
// (/v1/chat/completions) with "hello" and records the model of each
// request.
func ollamaServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var models []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req struct{ Model string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		models = append(models, req.Model)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`, req.Model)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), models...) }
}

// TestDefaultModelFollowsProvider: with one provider in the environment,
// ConfigFromEnv's client calls that provider's default model, and the call
// reaches that provider's server.
func TestDefaultModelFollowsProvider(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T) (env map[string]string, seen func() []string)
		wantID  string
		wantDef string
	}{
		{"only OPENAI_API_KEY", func(t *testing.T) (map[string]string, func() []string) {
			m := llmtest.New(llmtest.Text("hello"))
			srv := llmtest.NewOpenAIServer(m)
			t.Cleanup(srv.Close)
			return map[string]string{agent.EnvOpenAIKey: "sk-test", agent.EnvOpenAIBaseURL: srv.URL + "/v1"}, modelsOf(m)
		}, "gpt-4o", "openai:gpt-4o"},
		{"only ANTHROPIC_API_KEY", func(t *testing.T) (map[string]string, func() []string) {
			m := llmtest.New(llmtest.Text("hello"))
			srv := llmtest.NewAnthropicServer(m)
			t.Cleanup(srv.Close)
			return map[string]string{agent.EnvAnthropicKey: "sk-ant-test", agent.EnvAnthropicURL: srv.URL + "/v1"}, modelsOf(m)
		}, "claude-sonnet-4-20250514", "sonnet"},
		{"only OLLAMA_HOST", func(t *testing.T) (map[string]string, func() []string) {
			srv, seen := ollamaServer(t)
			return map[string]string{agent.EnvOllamaHost: srv.URL}, seen
		}, "llama3.2", "ollama:llama3.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearProviderEnv(t)
			env, seen := tt.setup(t)
			for k, v := range env {
				t.Setenv(k, v)
			}
			cfg, err := agent.ConfigFromEnv()
			if err != nil {
				t.Fatal(err)
			}
			cfg.Resilience = wirePolicy()
			c := newClient(t, cfg)
			resp, err := agent.Complete(context.Background(), c, "hi")
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "hello" || resp.Model != tt.wantDef || resp.ModelID != tt.wantID {
				t.Errorf("answer %q from %s (%s), want hello from %s (%s)", resp.Text, resp.Model, resp.ModelID, tt.wantDef, tt.wantID)
			}
			if got := seen(); len(got) != 1 || got[0] != tt.wantID {
				t.Errorf("server saw models %q, want [%s]", got, tt.wantID)
			}
		})
	}
}

func modelsOf(m *llmtest.Model) func() []string {
	return func() []string {
		var out []string
		for _, c := range m.Calls() {
			out = append(out, c.Request.Model)
		}
		return out
	}
}

// TestDefaultModelOverride: AGENTGRAPH_MODEL wins over the provider's
// default.
func TestDefaultModelOverride(t *testing.T) {
	clearProviderEnv(t)
	m := llmtest.New(llmtest.Text("hello"))
	srv := llmtest.NewOpenAIServer(m)
	defer srv.Close()
	t.Setenv(agent.EnvOpenAIKey, "sk-test")
	t.Setenv(agent.EnvOpenAIBaseURL, srv.URL+"/v1")
	t.Setenv(agent.EnvDefaultModel, "openai:gpt-4o-mini")
	cfg, err := agent.ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Complete(context.Background(), newClient(t, cfg), "hi"); err != nil {
		t.Fatal(err)
	}
	if got := modelsOf(m)(); len(got) != 1 || got[0] != "gpt-4o-mini" {
		t.Errorf("server saw %q, want gpt-4o-mini", got)
	}
}

// TestNoProviderErrorNamesFixes: a model whose provider is not configured
// fails with an error naming the provider's settings and the default-model
// settings.
func TestNoProviderErrorNamesFixes(t *testing.T) {
	clearProviderEnv(t)
	t.Setenv(agent.EnvOpenAIKey, "sk-test")
	cfg, err := agent.ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	_, err = agent.Complete(context.Background(), newClient(t, cfg), "hi", agent.WithModel("sonnet"))
	if !errors.Is(err, agent.ErrNoProvider) {
		t.Fatalf("err = %v, want ErrNoProvider", err)
	}
	for _, want := range []string{agent.EnvAnthropicKey, "Config.Anthropic", "WithModel", "Config.DefaultModel", agent.EnvDefaultModel, `"openai:gpt-4o"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// TestDefaultModelProviderName: AGENTGRAPH_MODEL may name a provider alone,
// for its default model.
func TestDefaultModelProviderName(t *testing.T) {
	clearProviderEnv(t)
	t.Setenv(agent.EnvDefaultModel, "openai")
	cfg, err := agent.ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DefaultModel != "openai:gpt-4o" {
		t.Errorf("DefaultModel = %q, want openai:gpt-4o", cfg.DefaultModel)
	}
}

// TestUnknownDefaultModelErrorNamesSetting: an unknown default model's error
// names the settings it comes from.
func TestUnknownDefaultModelErrorNamesSetting(t *testing.T) {
	clearProviderEnv(t)
	t.Setenv(agent.EnvOpenAIKey, "sk-test")
	t.Setenv(agent.EnvDefaultModel, "gpt-4o")
	cfg, err := agent.ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	_, err = agent.Complete(context.Background(), newClient(t, cfg), "hi")
	if !errors.Is(err, agent.ErrUnknownModel) {
		t.Fatalf("err = %v, want ErrUnknownModel", err)
	}
	for _, want := range []string{"Config.DefaultModel", agent.EnvDefaultModel, "provider:model-id", "openai:gpt-4o"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
