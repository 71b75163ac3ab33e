package provider

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/agentgraph/agentgraph/agent/internal/lcmodel"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/openai"
)

// The default model ids of the providers, used when a configuration names
// no model.
const (
	DefaultOpenAIModel    = "gpt-4o"
	DefaultAnthropicModel = "claude-sonnet-4-20250514"
	DefaultOllamaModel    = "llama3.2"
)

// The provider names, as in "provider:model-id" and Model.Provider.
const (
	NameOpenAI    = "openai"
	NameAnthropic = "anthropic"
	NameOllama    = "ollama"
)

// OpenAIConfig configures an OpenAI model, also of any OpenAI-compatible
// server (vLLM, LM Studio, OpenRouter, Ollama's /v1) through BaseURL.
type OpenAIConfig struct {
	// APIKey is sent as a bearer token. Required (any non-empty value for
	// servers that take none).
	APIKey string
	// BaseURL is the API root, such as "https://api.openai.com/v1" (the
	// default when empty) or "http://localhost:8000/v1".
	BaseURL string
	// Organization is sent as OpenAI-Organization when set.
	Organization string
	// Model is the model id; empty means DefaultOpenAIModel.
	Model string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// MaxReplyBytes caps the bytes of one reply read from the server (the
	// response body, streamed or not): a longer reply fails the call with
	// an error wrapping ErrReplyTooLarge that names this field. Zero means
	// DefaultMaxReplyBytes (16 MiB); negative is an error.
	MaxReplyBytes int64
	// StructuredOutputs sends a request's ResponseFormat.Schema as OpenAI's
	// response_format json_schema (structured outputs, not strict), in place
	// of JSON mode. OpenAI and most compatible servers (vLLM, recent Ollama)
	// accept it; leave it off for servers that know only json_object.
	StructuredOutputs bool
}

// AnthropicConfig configures an Anthropic model.
type AnthropicConfig struct {
	// APIKey is sent as x-api-key. Required.
	APIKey string
	// BaseURL is the API root; empty means "https://api.anthropic.com/v1".
	BaseURL string
	// Model is the model id; empty means DefaultAnthropicModel.
	Model string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// MaxReplyBytes caps the bytes of one reply read from the server (the
	// response body, streamed or not): a longer reply fails the call with
	// an error wrapping ErrReplyTooLarge that names this field. Zero means
	// DefaultMaxReplyBytes (16 MiB); negative is an error.
	MaxReplyBytes int64
}

// OllamaConfig configures a model served by Ollama.
type OllamaConfig struct {
	// Host is the server, such as "http://127.0.0.1:11434" (the default
	// when empty) or "127.0.0.1:11434" as OLLAMA_HOST has it.
	Host string
	// Model is the model id; empty means DefaultOllamaModel.
	Model string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// MaxReplyBytes caps the bytes of one reply read from the server (the
	// response body, streamed or not): a longer reply fails the call with
	// an error wrapping ErrReplyTooLarge that names this field. Zero means
	// DefaultMaxReplyBytes (16 MiB); negative is an error.
	MaxReplyBytes int64
}

// Model is a language model behind a provider's API, a model.Model. Build
// one with OpenAI, Anthropic, Ollama or FromEnv. It is safe for concurrent
// use.
//
// A Model makes one attempt per call: run it under a resilience policy (or
// use agent.Client) for retries. A request's Model field, when set, replaces
// the configured model id for that call.
type Model struct {
	llm      llms.Model
	dialect  lcmodel.Dialect
	provider string
	id       string
	direct   *anthropicAPI // set by AnthropicDirect instead of llm
	schemas  bool          // OpenAIConfig.StructuredOutputs
	limit    int64         // the reply cap
}

var _ model.Model = (*Model)(nil)

// OpenAI returns a model of OpenAI's chat completions API, or of any
// OpenAI-compatible server, or an error naming the field to fix. The id of
// a streamed reply (OpenAI's "chatcmpl-…") is the response's ID
// (model.Response.ID); a reply that is not streamed is read by langchaingo,
// which keeps no id, and its ID is empty.
func OpenAI(cfg OpenAIConfig) (*Model, error) { return openAI(cfg, "OpenAIConfig") }

// openAI builds an OpenAI model; config names the configuration type in
// errors.
func openAI(cfg OpenAIConfig, config string) (*Model, error) {
	limit, err := replyCap(cfg.MaxReplyBytes, config+".MaxReplyBytes")
	if err != nil {
		return nil, err
	}
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("provider: OpenAIConfig.APIKey is empty: set it or %s (any value for servers that take no key)", EnvOpenAIKey)
	}
	opts := []openai.Option{openai.WithToken(cfg.APIKey)}
	if cfg.BaseURL != "" {
		opts = append(opts, openai.WithBaseURL(cfg.BaseURL))
	}
	if cfg.Organization != "" {
		opts = append(opts, openai.WithOrganization(cfg.Organization))
	}
	hc := streamClient(capClient(cfg.HTTPClient, limit, config+".MaxReplyBytes"))
	if cfg.StructuredOutputs {
		hc = schemaClient(hc)
	}
	opts = append(opts, openai.WithHTTPClient(hc))
	id := cmp.Or(cfg.Model, DefaultOpenAIModel)
	llm, err := openai.New(append(opts, openai.WithModel(id))...)
	if err != nil {
		return nil, fmt.Errorf("provider: openai: %w", err)
	}
	return &Model{llm: llm, dialect: lcmodel.OpenAI, provider: NameOpenAI, id: id, schemas: cfg.StructuredOutputs, limit: limit}, nil
}

// Anthropic returns a model of Anthropic's Messages API, or an error naming
// the field to fix.
func Anthropic(cfg AnthropicConfig) (*Model, error) {
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("provider: AnthropicConfig.APIKey is empty: set it or %s", EnvAnthropicKey)
	}
	limit, err := replyCap(cfg.MaxReplyBytes, "AnthropicConfig.MaxReplyBytes")
	if err != nil {
		return nil, err
	}
	opts := []anthropic.Option{anthropic.WithToken(cfg.APIKey),
		anthropic.WithHTTPClient(capClient(cfg.HTTPClient, limit, "AnthropicConfig.MaxReplyBytes"))}
	if cfg.BaseURL != "" {
		opts = append(opts, anthropic.WithBaseURL(cfg.BaseURL))
	}
	id := cmp.Or(cfg.Model, DefaultAnthropicModel)
	llm, err := anthropic.New(append(opts, anthropic.WithModel(id))...)
	if err != nil {
		return nil, fmt.Errorf("provider: anthropic: %w", err)
	}
	return &Model{llm: llm, dialect: lcmodel.Anthropic, provider: NameAnthropic, id: id}, nil
}

// Ollama returns a model served by Ollama, through Ollama's OpenAI-compatible
// API (Host+"/v1"), which carries native tool calls, tool choice, JSON mode
// and streamed tool calls (langchaingo's client of Ollama's own API has no
// tool calling).
func Ollama(cfg OllamaConfig) (*Model, error) {
	host := strings.TrimRight(cmp.Or(cfg.Host, "http://127.0.0.1:11434"), "/")
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	m, err := openAI(OpenAIConfig{APIKey: "ollama", BaseURL: host + "/v1", Model: cmp.Or(cfg.Model, DefaultOllamaModel),
		HTTPClient: cfg.HTTPClient, MaxReplyBytes: cfg.MaxReplyBytes}, "OllamaConfig")
	if err != nil {
		return nil, err
	}
	m.provider = NameOllama
	return m, nil
}

// Provider returns the provider's name: "openai", "anthropic" or "ollama".
func (m *Model) Provider() string { return m.provider }

// ID returns the provider's id of the model, such as "gpt-4o".
func (m *Model) ID() string { return m.id }

// String returns "provider:model-id".
func (m *Model) String() string { return m.provider + ":" + m.id }

// Generate implements model.Model.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	ctx, _ = withCapState(ctx)
	if m.direct != nil {
		if req == nil {
			return nil, fmt.Errorf("provider %s: nil request", m)
		}
		id := cmp.Or(req.Model, m.id)
		resp, err := m.direct.generate(ctx, req, id)
		if err != nil {
			return nil, m.callError(ctx, id, err)
		}
		return resp, nil
	}
	msgs, opts, id, err := m.prepare(req)
	if err != nil {
		return nil, err
	}
	raw, err := m.llm.GenerateContent(m.withSchema(ctx, req), msgs, opts...)
	if err != nil {
		return nil, m.callError(ctx, id, err)
	}
	resp, err := lcmodel.Response(raw, m.dialect, id)
	if err != nil {
		return nil, fmt.Errorf("provider %s:%s: %w", m.provider, id, err)
	}
	return resp, nil
}

// Stream implements model.Model. Text, thinking and tool calls arrive as
// chunks of their own kinds; see the package documentation for what each
// provider streams.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	if m.direct != nil {
		if req == nil {
			return func(yield func(model.Chunk, error) bool) {
				yield(model.Chunk{}, fmt.Errorf("provider %s: nil request", m))
			}
		}
		return m.directStream(ctx, req, cmp.Or(req.Model, m.id))
	}
	msgs, opts, id, err := m.prepare(req)
	if err != nil {
		return func(yield func(model.Chunk, error) bool) { yield(model.Chunk{}, err) }
	}
	return lcmodel.Stream(ctx, func(ctx context.Context, emit func(model.Chunk) error) (*model.Response, error) {
		ctx, _ = withCapState(ctx)
		if m.dialect == lcmodel.OpenAI {
			return m.streamOpenAI(ctx, req, msgs, opts, id, emit)
		}
		s := lcmodel.NewSplitter(emit)
		raw, err := m.llm.GenerateContent(m.withSchema(ctx, req), msgs, append(opts, s.Options()...)...)
		if err != nil {
			return nil, m.callError(ctx, id, err)
		}
		resp, err := lcmodel.Response(raw, m.dialect, id)
		if err != nil {
			return nil, fmt.Errorf("provider %s:%s: %w", m.provider, id, err)
		}
		if err := s.Finish(resp.ToolCalls()); err != nil {
			return nil, err
		}
		return resp, nil
	})
}

func (m *Model) prepare(req *model.Request) ([]llms.MessageContent, []llms.CallOption, string, error) {
	if req == nil {
		return nil, nil, "", fmt.Errorf("provider %s: nil request", m)
	}
	id := cmp.Or(req.Model, m.id)
	msgs, err := lcmodel.Messages(req.Messages, m.dialect)
	if err != nil {
		return nil, nil, "", fmt.Errorf("provider %s:%s: %w", m.provider, id, err)
	}
	if len(msgs) == 0 {
		return nil, nil, "", fmt.Errorf("provider %s:%s: the request has no messages: add at least one user message", m.provider, id)
	}
	return msgs, lcmodel.Options(req, m.dialect, id), id, nil
}

// callError returns the error of a failed call: the reply cap's when the
// reply went over it, the context's when it ended, else err, each naming
// the provider and model.
func (m *Model) callError(ctx context.Context, id string, err error) error {
	if cerr := capErr(ctx); cerr != nil {
		err = cerr
	} else if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("provider %s:%s: %w", m.provider, id, err)
}
