package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/google/go-cmp/cmp"
)

func TestDefaultRegistry(t *testing.T) {
	r := agent.DefaultRegistry()
	tests := []struct {
		name, provider, id string
		thinks             bool
	}{
		{"haiku", agent.ProviderAnthropic, "claude-3-5-haiku-20241022", false},
		{"claude-haiku", agent.ProviderAnthropic, "claude-3-5-haiku-20241022", false},
		{"sonnet", agent.ProviderAnthropic, "claude-sonnet-4-20250514", false},
		{"opus", agent.ProviderAnthropic, "claude-opus-4-20250514", false},
		{"thinking", agent.ProviderAnthropic, "claude-sonnet-4-20250514", true},
		{"openai:gpt-4o", agent.ProviderOpenAI, "gpt-4o", false},
		{"ollama:llama3.2", agent.ProviderOllama, "llama3.2", false},
	}
	for _, tt := range tests {
		s, ok := r.Lookup(tt.name)
		if !ok || s.Provider != tt.provider || s.ID != tt.id || s.ThinkByDefault != tt.thinks {
			t.Errorf("Lookup(%q) = %+v, %v", tt.name, s, ok)
		}
	}
	if _, ok := r.Lookup("gpt-9"); ok {
		t.Error("Lookup of an unknown bare name succeeded")
	}
	if s, _ := r.Lookup("openai:gpt-4o"); !s.Capabilities.JSONMode {
		t.Error("openai models should default to JSON mode")
	}
	// Fresh registries are independent.
	if err := r.Register(agent.ModelSpec{Name: "sonnet", Provider: "openai", ID: "gpt-4o"}); err != nil {
		t.Fatal(err)
	}
	if s, _ := agent.DefaultRegistry().Lookup("sonnet"); s.Provider != agent.ProviderAnthropic {
		t.Error("changing one registry changed another")
	}
}

func TestRegisterErrors(t *testing.T) {
	tests := []struct {
		spec agent.ModelSpec
		want string
	}{
		{agent.ModelSpec{Provider: "openai", ID: "x"}, "Name is empty"},
		{agent.ModelSpec{Name: "a", ID: "x"}, "Provider is empty"},
		{agent.ModelSpec{Name: "a", Provider: "openai"}, "ID is empty"},
		{agent.ModelSpec{Name: "a", Provider: "openai", ID: "x", ThinkByDefault: true}, "needs Capabilities.Thinking"},
		{agent.ModelSpec{Name: "a:b", Provider: "openai", ID: "x"}, "reserved"},
	}
	for _, tt := range tests {
		err := agent.DefaultRegistry().Register(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Register(%+v) = %v, want error containing %q", tt.spec, err, tt.want)
		}
	}
}

func TestRegisterAliases(t *testing.T) {
	r := agent.DefaultRegistry()
	if err := agent.RegisterAliases(r, "sonnet=openai:gpt-4o, local=ollama:llama3.2;"); err != nil {
		t.Fatal(err)
	}
	s, _ := r.Lookup("sonnet")
	if diff := cmp.Diff(agent.ModelSpec{Name: "sonnet", Provider: "openai", ID: "gpt-4o",
		Capabilities: agent.Capabilities{JSONMode: true, ToolCalling: true}}, s); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := agent.RegisterAliases(r, "broken"); err == nil || !strings.Contains(err.Error(), "name=provider:model-id") {
		t.Errorf("err = %v", err)
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv(agent.EnvOpenAIKey, "sk-test")
	t.Setenv(agent.EnvOpenAIBaseURL, "http://127.0.0.1:1/v1")
	t.Setenv(agent.EnvAnthropicKey, "")
	t.Setenv(agent.EnvOllamaHost, "http://127.0.0.1:2")
	t.Setenv(agent.EnvDefaultModel, "fast")
	t.Setenv(agent.EnvModelAliases, "fast=openai:gpt-4o-mini")
	cfg, err := agent.ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OpenAI == nil || cfg.OpenAI.APIKey != "sk-test" || cfg.OpenAI.BaseURL != "http://127.0.0.1:1/v1" ||
		cfg.Anthropic != nil || cfg.Ollama == nil || cfg.DefaultModel != "fast" {
		t.Fatalf("cfg = %+v", cfg)
	}
	if s, ok := cfg.Registry.Lookup("fast"); !ok || s.ID != "gpt-4o-mini" {
		t.Errorf("alias fast = %+v", s)
	}
	if _, err := agent.New(cfg); err != nil {
		t.Fatal(err)
	}
	t.Setenv(agent.EnvModelAliases, "oops")
	if _, err := agent.ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), agent.EnvModelAliases) {
		t.Errorf("err = %v, want one naming %s", err, agent.EnvModelAliases)
	}
}

func TestClientErrors(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, agent.Config{Providers: map[string]model.Model{"openai": llmtest.New()}})
	_, err := agent.Complete(ctx, c, "hi", agent.WithModel("sonnet"))
	if !errors.Is(err, agent.ErrNoProvider) || !strings.Contains(err.Error(), agent.EnvAnthropicKey) {
		t.Errorf("err = %v, want ErrNoProvider naming %s", err, agent.EnvAnthropicKey)
	}
	_, err = agent.Complete(ctx, c, "hi", agent.WithModel("gpt-9"))
	if !errors.Is(err, agent.ErrUnknownModel) || !strings.Contains(err.Error(), "provider:model-id") {
		t.Errorf("err = %v, want ErrUnknownModel with a hint", err)
	}
	c = newClient(t, agent.Config{Model: llmtest.New()})
	_, err = agent.Complete(ctx, c, "hi", agent.WithModel("haiku"), agent.WithThinking(0))
	if !errors.Is(err, agent.ErrThinkingUnsupported) {
		t.Errorf("err = %v, want ErrThinkingUnsupported", err)
	}
	if _, err := agent.New(agent.Config{Anthropic: &provider.AnthropicConfig{}}); err == nil ||
		!strings.Contains(err.Error(), agent.EnvAnthropicKey) {
		t.Errorf("New with an empty key: %v", err)
	}
}

func TestThinkingCallOptions(t *testing.T) {
	ctx := context.Background()
	m := llmtest.New().Default(llmtest.Reply{Text: "4", Thinking: "2+2 is 4"})
	c := newClient(t, agent.Config{Model: m, MaxTokens: 1000})
	tests := []struct {
		name        string
		opts        []agent.Option
		budget      int
		maxTokens   int
		temperature float64
	}{
		{"alias thinks by default", []agent.Option{agent.WithModel("thinking")}, 10000, 11000, 1},
		{"explicit budget", []agent.Option{agent.WithModel("sonnet"), agent.WithThinking(2048), agent.WithTemperature(0.2)}, 2048, 3048, 1},
		{"switched off", []agent.Option{agent.WithModel("thinking"), agent.WithoutThinking(), agent.WithTemperature(0.2)}, 0, 1000, 0.2},
		{"plain", []agent.Option{agent.WithModel("haiku"), agent.WithMaxTokens(50)}, 0, 50, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := agent.Complete(ctx, c, "2+2?", tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "4" || resp.Thinking != "2+2 is 4" {
				t.Errorf("text %q thinking %q", resp.Text, resp.Thinking)
			}
			calls := m.Calls()
			req := calls[len(calls)-1].Request
			budget, temperature := 0, 0.0
			if req.Thinking != nil && !req.Thinking.Disabled {
				budget = req.Thinking.Budget
			}
			if req.Temperature != nil {
				temperature = *req.Temperature
			}
			// On the wire the budget counts within max_tokens (Anthropic).
			if budget != tt.budget || req.MaxTokens+budget != tt.maxTokens || temperature != tt.temperature {
				t.Errorf("budget %d max_tokens %d(+budget) temperature %v; want %d %d %v",
					budget, req.MaxTokens, temperature, tt.budget, tt.maxTokens, tt.temperature)
			}
		})
	}
}

func TestClientResolvesRequestModel(t *testing.T) {
	m := llmtest.New(llmtest.Transient(), llmtest.Text("pong"))
	var mm model.Model = newClient(t, agent.Config{Model: m, Resilience: fastPolicy()})
	resp, err := mm.Generate(context.Background(), &model.Request{Model: "haiku", MaxTokens: 5,
		Messages: []model.Message{model.User("ping")}})
	if err != nil || resp.Text() != "pong" {
		t.Fatalf("Generate = %+v, %v", resp, err)
	}
	req := m.Calls()[1].Request
	if req.Model != "claude-3-5-haiku-20241022" || req.MaxTokens != 5 {
		t.Errorf("provider got model %q max_tokens %d; want the alias resolved and the cap passed", req.Model, req.MaxTokens)
	}
}
