package agent_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/resilience"
	"github.com/google/go-cmp/cmp"
)

// These tests run langchaingo's real OpenAI and Anthropic clients, built by
// agent.New from configuration, against llmtest servers speaking the
// providers' HTTP APIs.

func openAIClient(t *testing.T, m *llmtest.Model) *agent.Client {
	t.Helper()
	srv := llmtest.NewOpenAIServer(m)
	t.Cleanup(srv.Close)
	return newClient(t, agent.Config{
		OpenAI:       &provider.OpenAIConfig{APIKey: "sk-test", BaseURL: srv.URL + "/v1"},
		Registry:     mustRegistry(t, agent.ModelSpec{Name: "gpt", Provider: agent.ProviderOpenAI, ID: "gpt-test", Capabilities: agent.Capabilities{JSONMode: true, ToolCalling: true}}),
		DefaultModel: "gpt",
		Resilience:   wirePolicy(),
	})
}

func anthropicClient(t *testing.T, m *llmtest.Model) *agent.Client {
	t.Helper()
	srv := llmtest.NewAnthropicServer(m)
	t.Cleanup(srv.Close)
	return newClient(t, agent.Config{
		Anthropic:  &provider.AnthropicConfig{APIKey: "sk-ant-test", BaseURL: srv.URL + "/v1"},
		Resilience: wirePolicy(),
	})
}

// wirePolicy is fastPolicy with an attempt timeout generous enough for
// HTTP round trips on a loaded machine; a hung request still times out.
func wirePolicy() *resilience.Config {
	p := fastPolicy()
	p.Timeout = 2 * time.Second
	return p
}

type recorder struct {
	mu     sync.Mutex
	chunks []model.Chunk
}

func (r *recorder) add(_ context.Context, c model.Chunk) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.chunks = append(r.chunks, c)
	return nil
}

func TestWireOpenAI(t *testing.T) {
	usage := model.Usage{InputTokens: 9, OutputTokens: 3, ThinkingTokens: 4, CacheReadTokens: 2}
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "streaming"}[stream], func(t *testing.T) {
			m := llmtest.New(llmtest.Reply{Text: "Hello world", Chunks: []string{"Hel", "lo", " world"}, Usage: usage})
			c := openAIClient(t, m)
			var rec recorder
			opts := []agent.Option{agent.WithSystem("be brief")}
			if stream {
				opts = append(opts, agent.WithStreaming(rec.add))
			}
			resp, err := agent.Complete(context.Background(), c, "hi", opts...)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "Hello world" || resp.ModelID != "gpt-test" || resp.Provider != "openai" {
				t.Errorf("response = %+v", resp)
			}
			if diff := cmp.Diff(usage, resp.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			var want []model.Chunk
			if stream {
				// OpenAI ends its stream with an empty delta; it is not delivered.
				want = []model.Chunk{{Kind: model.ChunkText, Text: "Hel"}, {Kind: model.ChunkText, Text: "lo"}, {Kind: model.ChunkText, Text: " world"}}
			}
			if diff := cmp.Diff(want, rec.chunks); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			call := m.Calls()[0]
			if call.System != "be brief" || call.Prompt != "hi" || call.Request.Model != "gpt-test" {
				t.Errorf("the server received %+v", call)
			}
		})
	}
}

func TestWireOpenAIStructuredJSONMode(t *testing.T) {
	m := llmtest.New(
		llmtest.Text(`{"action": "ANSWER"}`),
		llmtest.Text(`{"action": "ANSWER", "reasoning": "simple", "response": "4"}`),
	)
	c := openAIClient(t, m)
	res, err := agent.Call[SupervisorDecision](context.Background(), c, "2+2?", agent.WithStreaming(nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.Response != "4" || len(res.Attempts) != 1 || res.Attempts[0].Message != "- Field 'reasoning': Field required" {
		t.Errorf("result = %+v", res)
	}
	for i, call := range m.Calls() {
		if call.Request.ResponseFormat == nil {
			t.Errorf("call %d: response_format json_object not sent", i+1)
		}
	}
	if !strings.Contains(m.Calls()[1].Prompt, "Error Type: Schema Validation Error") {
		t.Errorf("retry prompt = %q", m.Calls()[1].Prompt)
	}
}

func TestWireRateLimitRetryAfter(t *testing.T) {
	const wait = 80 * time.Millisecond
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			m := llmtest.New(llmtest.RateLimited(wait), llmtest.Text("ok"))
			c := openAIClient(t, m)
			if provider == "anthropic" {
				c = anthropicClient(t, m)
			}
			start := time.Now()
			resp, err := agent.Complete(context.Background(), c, "hi")
			if err != nil {
				t.Fatal(err)
			}
			if elapsed := time.Since(start); elapsed < wait {
				t.Errorf("retried after %v, before the server's Retry-After of %v", elapsed, wait)
			}
			if resp.Text != "ok" || len(m.Calls()) != 2 {
				t.Errorf("text %q after %d calls", resp.Text, len(m.Calls()))
			}
		})
	}
}

func TestWireErrorClassification(t *testing.T) {
	fail := func(status int) llmtest.Reply {
		return llmtest.Fail(&agent.ProviderError{StatusCode: status, Err: errors.New(http.StatusText(status))})
	}
	tests := []struct {
		name      string
		provider  string
		first     llmtest.Reply
		status    int
		wantCalls int
	}{
		{"400 is permanent", "openai", fail(http.StatusBadRequest), 400, 1},
		{"401 is permanent", "openai", fail(http.StatusUnauthorized), 401, 1},
		{"500 is retried", "openai", fail(http.StatusInternalServerError), 0, 2},
		{"529 overloaded is retried", "anthropic", fail(529), 0, 2},
		{"404 is permanent", "anthropic", fail(http.StatusNotFound), 404, 1},
		{"hung request times out and is retried", "anthropic", llmtest.Hang(), 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.name, func(t *testing.T) {
			m := llmtest.New(tt.first, llmtest.Text("ok"))
			c := openAIClient(t, m)
			if tt.provider == "anthropic" {
				c = anthropicClient(t, m)
			}
			_, err := agent.Complete(context.Background(), c, "hi")
			if got := len(m.Calls()); got != tt.wantCalls {
				t.Errorf("%d calls, want %d (err %v)", got, tt.wantCalls, err)
			}
			if tt.status == 0 {
				if err != nil {
					t.Errorf("err = %v, want success after a retry", err)
				}
				return
			}
			var pe *agent.ProviderError
			if !errors.As(err, &pe) || pe.StatusCode != tt.status || pe.Provider != tt.provider {
				t.Errorf("err = %v, want a %s *ProviderError with status %d", err, tt.provider, tt.status)
			}
		})
	}
}

func TestWireAnthropicThinking(t *testing.T) {
	usage := model.Usage{InputTokens: 25, OutputTokens: 15, ThinkingTokens: 30, CacheReadTokens: 5, CacheWriteTokens: 7}
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "streaming"}[stream], func(t *testing.T) {
			m := llmtest.New(llmtest.Reply{Thinking: "let me think", Text: "Hello there", Usage: usage})
			m.SetChunkSize(6)
			c := anthropicClient(t, m)
			var rec recorder
			opts := []agent.Option{agent.WithModel("thinking"), agent.WithThinking(2048), agent.WithTemperature(0)}
			if stream {
				opts = append(opts, agent.WithStreaming(rec.add))
			}
			resp, err := agent.Complete(context.Background(), c, "hi", opts...)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "Hello there" || resp.Thinking != "let me think" {
				t.Errorf("text %q thinking %q; want them apart", resp.Text, resp.Thinking)
			}
			// Anthropic bills thinking as output and does not report it apart.
			want := model.Usage{InputTokens: 25, OutputTokens: 45, CacheReadTokens: 5, CacheWriteTokens: 7}
			if diff := cmp.Diff(want, resp.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			var wantChunks []model.Chunk
			if stream {
				wantChunks = []model.Chunk{
					{Kind: model.ChunkThinking, Text: "let me"}, {Kind: model.ChunkThinking, Text: " think"},
					{Kind: model.ChunkText, Text: "Hello "}, {Kind: model.ChunkText, Text: "there"},
				}
			}
			if diff := cmp.Diff(wantChunks, rec.chunks); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			o := m.Calls()[0].Request
			if o.Thinking == nil || o.Thinking.Budget != 2048 || o.Temperature == nil || *o.Temperature != 1 || o.MaxTokens <= 2048 ||
				o.Model != "claude-sonnet-4-20250514" {
				t.Errorf("request: thinking %+v temperature %v max_tokens %d model %q; want budget 2048, temperature 1, max_tokens above the budget",
					o.Thinking, o.Temperature, o.MaxTokens, o.Model)
			}
		})
	}
}

func TestWireAnthropicToolOutput(t *testing.T) {
	args := `{"action": "CALL_TOOL", "reasoning": "needs search", "operator": "web_searcher", "params": {"q": "go"}}`
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "streaming"}[stream], func(t *testing.T) {
			m := llmtest.New(llmtest.Reply{ToolCalls: []model.ToolCall{toolCall("supervisor_decision", args)},
				Usage: model.Usage{InputTokens: 3, OutputTokens: 4}})
			c := anthropicClient(t, m)
			opts := []agent.Option{agent.WithOutputMode(agent.OutputTool)}
			if stream {
				opts = append(opts, agent.WithStreaming(nil))
			}
			res, err := agent.Call[SupervisorDecision](context.Background(), c, "search go", opts...)
			if err != nil {
				t.Fatal(err)
			}
			if res.Value.Operator != "web_searcher" || res.Usage.Total() != 7 {
				t.Errorf("result = %+v", res)
			}
			if tools := m.Calls()[0].Request.Tools; len(tools) != 1 || tools[0].Name != "supervisor_decision" {
				t.Errorf("tools sent = %+v", tools)
			}
		})
	}
}

func TestStreamingCallbackStopsCall(t *testing.T) {
	stop := errors.New("client went away")
	for _, provider := range []string{"openai", "anthropic", "in-process"} {
		t.Run(provider, func(t *testing.T) {
			m := llmtest.New(llmtest.Text("a long streamed answer"), llmtest.Text("never"))
			var c *agent.Client
			switch provider {
			case "openai":
				c = openAIClient(t, m)
			case "anthropic":
				c = anthropicClient(t, m)
			default:
				c = newClient(t, agent.Config{Model: m, Resilience: fastPolicy()})
			}
			n := 0
			_, err := agent.Complete(context.Background(), c, "hi", agent.WithStreaming(func(context.Context, model.Chunk) error {
				n++
				return stop
			}))
			if !errors.Is(err, stop) || n != 1 || len(m.Calls()) != 1 {
				t.Errorf("err = %v after %d chunks and %d calls; want the callback's error after 1 chunk, no retry", err, n, len(m.Calls()))
			}
		})
	}
}

// countingTransport counts the requests it sends.
type countingTransport struct{ n *int }

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	*c.n++
	return http.DefaultTransport.RoundTrip(r)
}

// TestProviderConfigOfClient: Config.OpenAI, Anthropic and Ollama are the
// provider package's configs. A Model in one is reported (the registry
// names each call's model); the config's HTTPClient replaces
// Config.HTTPClient for its provider; its other fields, such as
// MaxReplyBytes, reach the provider model.
func TestProviderConfigOfClient(t *testing.T) {
	for _, tt := range []struct {
		field string
		cfg   agent.Config
	}{
		{"OpenAI", agent.Config{OpenAI: &provider.OpenAIConfig{APIKey: "k", Model: "gpt-4o"}}},
		{"Anthropic", agent.Config{Anthropic: &provider.AnthropicConfig{APIKey: "k", Model: "claude"}}},
		{"Ollama", agent.Config{Ollama: &provider.OllamaConfig{Model: "llama3.2"}}},
	} {
		if _, err := agent.New(tt.cfg); err == nil || !strings.Contains(err.Error(), "Config."+tt.field+".Model") || !strings.Contains(err.Error(), "DefaultModel") {
			t.Errorf("New with Config.%s.Model set: %v; want an error naming the field and Config.DefaultModel", tt.field, err)
		}
	}

	m := llmtest.New().Default(llmtest.Reply{Text: "Hello world"})
	srv := llmtest.NewOpenAIServer(m)
	t.Cleanup(srv.Close)
	var own, shared int
	cfg := agent.Config{
		OpenAI:       &provider.OpenAIConfig{APIKey: "sk-test", BaseURL: srv.URL + "/v1", HTTPClient: &http.Client{Transport: countingTransport{&own}}},
		HTTPClient:   &http.Client{Transport: countingTransport{&shared}},
		DefaultModel: "openai:gpt-test",
		Resilience:   wirePolicy(),
	}
	resp, err := agent.Complete(context.Background(), newClient(t, cfg), "hi")
	if err != nil || resp.Text != "Hello world" {
		t.Fatalf("Complete = %+v, %v", resp, err)
	}
	if own != 1 || shared != 0 {
		t.Errorf("requests sent by Config.OpenAI.HTTPClient %d, by Config.HTTPClient %d; want 1 and 0", own, shared)
	}

	cfg.OpenAI = &provider.OpenAIConfig{APIKey: "sk-test", BaseURL: srv.URL + "/v1", MaxReplyBytes: 16}
	if _, err := agent.Complete(context.Background(), newClient(t, cfg), "hi"); !errors.Is(err, provider.ErrReplyTooLarge) {
		t.Errorf("Complete with Config.OpenAI.MaxReplyBytes 16: %v, want ErrReplyTooLarge", err)
	}
}
