package provider_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
)

// clearEnv unsets every variable FromEnv reads, for the test.
func clearEnv(t *testing.T) {
	for _, k := range []string{provider.EnvModel, provider.EnvOpenAIKey, provider.EnvOpenAIBaseURL, provider.EnvOpenAIOrg,
		provider.EnvAnthropicKey, provider.EnvAnthropicURL, provider.EnvOllamaHost} {
		t.Setenv(k, "")
	}
}

// TestFromEnvSingleProvider: with one provider configured, FromEnv's model
// is that provider's default model, and a call reaches that provider's wire
// server under that model id.
func TestFromEnvSingleProvider(t *testing.T) {
	tests := []struct {
		name   string
		server func(*llmtest.Model) *httptest.Server
		env    func(url string) map[string]string
		want   string
	}{
		{"openai", llmtest.NewOpenAIServer, func(url string) map[string]string {
			return map[string]string{provider.EnvOpenAIKey: "sk-test", provider.EnvOpenAIBaseURL: url + "/v1"}
		}, provider.DefaultModel(provider.NameOpenAI)},
		{"anthropic", llmtest.NewAnthropicServer, func(url string) map[string]string {
			return map[string]string{provider.EnvAnthropicKey: "sk-ant-test", provider.EnvAnthropicURL: url + "/v1"}
		}, provider.DefaultModel(provider.NameAnthropic)},
		{"ollama", llmtest.NewOpenAIServer, func(url string) map[string]string {
			return map[string]string{provider.EnvOllamaHost: strings.TrimPrefix(url, "http://")}
		}, provider.DefaultModel(provider.NameOllama)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			script := llmtest.New(llmtest.Text("hello"))
			srv := tt.server(script)
			defer srv.Close()
			for k, v := range tt.env(srv.URL) {
				t.Setenv(k, v)
			}
			m, err := provider.FromEnv()
			if err != nil {
				t.Fatal(err)
			}
			if m.String() != tt.want {
				t.Errorf("model = %s, want %s", m, tt.want)
			}
			resp, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{model.User("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			calls := script.Calls()
			_, id, _ := strings.Cut(tt.want, ":")
			if resp.Text() != "hello" || len(calls) != 1 || calls[0].Request.Model != id {
				t.Errorf("answer %q; server saw %d calls (first for model %q); want one for %q", resp.Text(), len(calls), calls[0].Request.Model, id)
			}
		})
	}
}

// TestFromEnvOverride: AGENTGRAPH_MODEL chooses the provider and model among
// several configured ones.
func TestFromEnvOverride(t *testing.T) {
	clearEnv(t)
	script := llmtest.New(llmtest.Text("from anthropic"))
	srv := llmtest.NewAnthropicServer(script)
	defer srv.Close()
	t.Setenv(provider.EnvOpenAIKey, "sk-test")
	t.Setenv(provider.EnvAnthropicKey, "sk-ant-test")
	t.Setenv(provider.EnvAnthropicURL, srv.URL+"/v1")
	t.Setenv(provider.EnvModel, "anthropic:claude-3-5-haiku-20241022")
	m, err := provider.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{model.User("hi")}})
	if err != nil || resp.Text() != "from anthropic" || script.Calls()[0].Request.Model != "claude-3-5-haiku-20241022" {
		t.Errorf("resp %+v, err %v", resp, err)
	}
}

// TestFromEnvErrors: every failure names the fixes, the model setting
// included.
func TestFromEnvErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"nothing", nil, []string{provider.EnvOpenAIKey, provider.EnvAnthropicKey, provider.EnvOllamaHost, provider.EnvModel}},
		{"several", map[string]string{provider.EnvOpenAIKey: "k", provider.EnvAnthropicKey: "k"},
			[]string{"anthropic, openai", provider.EnvModel}},
		{"chosen provider without key", map[string]string{provider.EnvModel: "anthropic:claude-x", provider.EnvOpenAIKey: "k"},
			[]string{provider.EnvAnthropicKey, provider.EnvModel, "openai:gpt-4o"}},
		{"unknown provider", map[string]string{provider.EnvModel: "gemini:pro"}, []string{`unknown provider "gemini"`, provider.EnvModel}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, err := provider.FromEnv()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}
