package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/resilience"
	"go.uber.org/zap"
)

// Config configures a Client. The zero Config is valid but has no provider:
// set Providers, Model, or one of OpenAI, Anthropic and Ollama (ConfigFromEnv
// fills them from the environment).
type Config struct {
	// Registry resolves model names. Nil means DefaultRegistry().
	Registry *Registry
	// DefaultModel is the model of calls without WithModel (and of
	// model.Requests without Model): a registry name or alias, or
	// "provider:model-id". Empty means the configured provider's default:
	// "sonnet" when Anthropic is configured (or Model serves every
	// provider), else "openai:gpt-4o" when OpenAI is, else
	// "ollama:llama3.2" when Ollama is. ConfigFromEnv sets it from
	// AGENTGRAPH_MODEL.
	DefaultModel string
	// Providers maps provider names (ModelSpec.Provider) to the models that
	// serve them: a provider model of package agent/provider, a scripted
	// model of package llmtest, or any model.Model. Each call's Request.Model
	// is the spec's ID. Entries here win over the models built from OpenAI,
	// Anthropic and Ollama.
	Providers map[string]model.Model
	// Model, when set, serves every provider that has no entry of its own. A
	// single scripted model (see package llmtest) behind every alias is the
	// usual test setup.
	Model model.Model
	// OpenAI, when set, builds the "openai" provider: an OpenAI model of
	// package agent/provider serving every model id the registry names for
	// it. Its Model must be empty (the registry names each call's model;
	// New reports one that is set); its HTTPClient, when set, replaces
	// HTTPClient below for this provider.
	OpenAI *provider.OpenAIConfig
	// Anthropic, when set, builds the "anthropic" provider, as OpenAI does.
	Anthropic *provider.AnthropicConfig
	// Ollama, when set, builds the "ollama" provider, as OpenAI does.
	Ollama *provider.OllamaConfig
	// HTTPClient is the base HTTP client of the providers built here whose
	// config sets none. Nil means a client over http.DefaultTransport with
	// no overall timeout (the resilience policy times out each attempt).
	HTTPClient *http.Client
	// MaxTokens caps answers of specs without MaxTokens. Zero means 4096.
	MaxTokens int
	// MaxAttempts is Call's default number of attempts. Zero means 3.
	MaxAttempts int
	// Resilience is the policy every model call runs under, one Policy per
	// provider model (each with its own breaker). Nil means
	// resilience.LLM(): 3 attempts with backoff, honouring Retry-After on
	// rate limits, a breaker, and 120 s per attempt. A pointer to the zero
	// Config turns every stage off.
	Resilience *resilience.Config
	// Logger receives one debug line per model call and a warning per
	// rejected structured reply. Nil means no logging.
	Logger *zap.Logger
}

// Client calls language models by name: it resolves a name through its
// Registry to a provider's model.Model, normalises usage, keeps thinking
// apart from the answer, streams chunks, and runs every call through the
// LLM resilience policy. It is safe for concurrent use.
type Client struct {
	reg          *Registry
	providers    map[string]model.Model
	instrumented map[string]bool // providers built here, whose HTTP answers are recorded
	fallback     model.Model
	defaultModel string
	maxTokens    int
	maxAttempts  int
	log          *zap.Logger
	guard        *guard
}

// New returns a Client for cfg, or an error naming the configuration field
// to fix.
func New(cfg Config) (*Client, error) {
	built, err := buildProviders(cfg)
	if err != nil {
		return nil, err
	}
	instrumented := make(map[string]bool, len(built))
	for name := range built {
		instrumented[name] = cfg.Providers[name] == nil
	}
	maps.Copy(built, cfg.Providers)
	for name, m := range built {
		if m == nil {
			return nil, fmt.Errorf("agent: Config.Providers[%q] is nil: remove it or set a model", name)
		}
	}
	c := &Client{
		reg:          cfg.Registry,
		providers:    built,
		instrumented: instrumented,
		fallback:     cfg.Model,
		defaultModel: cfg.DefaultModel,
		maxTokens:    cfg.MaxTokens,
		maxAttempts:  cfg.MaxAttempts,
		log:          cfg.Logger,
	}
	if c.reg == nil {
		c.reg = DefaultRegistry()
	}
	if c.defaultModel == "" {
		c.defaultModel = defaultModelFor(cfg.Model != nil, built)
	}
	if c.maxTokens <= 0 {
		c.maxTokens = defaultMaxTokens
	}
	if c.maxAttempts <= 0 {
		c.maxAttempts = defaultMaxAttempts
	}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	if c.guard, err = newGuard(cfg.Resilience, c.log); err != nil {
		return nil, err
	}
	return c, nil
}

// defaultModelFor returns the default model of a client whose providers are
// those given (and every provider, with a fallback model).
func defaultModelFor(fallback bool, providers map[string]model.Model) string {
	switch {
	case fallback || providers[ProviderAnthropic] != nil:
		return "sonnet"
	case providers[ProviderOpenAI] != nil:
		return provider.DefaultModel(provider.NameOpenAI)
	case providers[ProviderOllama] != nil:
		return provider.DefaultModel(provider.NameOllama)
	}
	return "sonnet"
}

// Registry returns the client's model registry.
func (c *Client) Registry() *Registry { return c.reg }

// Response is the outcome of one call of Complete or Call.
type Response struct {
	// Text is the answer, without any thinking.
	Text string
	// Thinking is the model's extended thinking, empty when it did not think.
	Thinking string
	// ToolCalls are the tool calls the model asked for.
	ToolCalls []model.ToolCall
	// StopReason says why the model stopped: a model.FinishReason such as
	// "stop", "length" or "tool_calls".
	StopReason string
	// Usage counts the call's tokens.
	Usage model.Usage
	// Model is the name the call resolved (such as "sonnet").
	Model string
	// Provider and ModelID say which provider model answered.
	Provider, ModelID string
	// ResponseID is the provider's id of the reply (model.Response.ID),
	// such as Anthropic's "msg_…" or OpenAI's "chatcmpl-…", for logs and
	// support requests; empty when the provider gives none. It is not
	// unique: a server or proxy may repeat it.
	ResponseID string
	// Message is the complete reply: thinking (with its provider
	// signature), text and tool calls, in the provider's order.
	Message model.Message
}

// prompt returns the messages of one call: the system message (when system
// is not empty) and the user prompt.
func prompt(system, text string) []model.Message {
	if system == "" {
		return []model.Message{model.User(text)}
	}
	return []model.Message{model.System(system), model.User(text)}
}

func (c *Client) options(opts []Option) options {
	if len(opts) == 0 {
		return options{model: c.defaultModel}
	}
	o := &options{model: c.defaultModel}
	for _, f := range opts {
		f(o)
	}
	if o.model == "" {
		o.model = c.defaultModel
	}
	return *o
}

// resolve finds the spec and provider model for a name.
func (c *Client) resolve(name string) (ModelSpec, model.Model, error) {
	spec, ok := c.reg.Lookup(name)
	if !ok {
		from := "WithModel or model.Request.Model"
		if name == c.defaultModel {
			from = "the default model: Config.DefaultModel or " + EnvDefaultModel
		}
		return ModelSpec{}, nil, fmt.Errorf("%w %q (%s): register it in the Registry, or name it as \"provider:model-id\" such as %q (known: %s)",
			ErrUnknownModel, name, from, provider.DefaultModel(provider.NameOpenAI), strings.Join(c.reg.Names(), ", "))
	}
	m := c.providers[spec.Provider]
	if m == nil {
		m = c.fallback
	}
	if m == nil {
		hint := "set Config.Providers[\"" + spec.Provider + "\"]"
		switch spec.Provider {
		case ProviderOpenAI:
			hint = "set " + EnvOpenAIKey + " or Config.OpenAI"
		case ProviderAnthropic:
			hint = "set " + EnvAnthropicKey + " or Config.Anthropic"
		case ProviderOllama:
			hint = "set " + EnvOllamaHost + " or Config.Ollama"
		}
		configured := slices.Sorted(maps.Keys(c.providers))
		alt := ""
		if d := defaultModelFor(false, c.providers); d != name {
			if ds, ok := c.reg.Lookup(d); ok && c.providers[ds.Provider] != nil {
				alt = " such as " + strconv.Quote(d)
			}
		}
		return ModelSpec{}, nil, fmt.Errorf("%w: model %q needs provider %q: %s; or use a model of a configured provider%s "+
			"with WithModel, Config.DefaultModel or %s (configured: %v)",
			ErrNoProvider, name, spec.Provider, hint, alt, EnvDefaultModel, configured)
	}
	return spec, m, nil
}

// settle fills the request's model id, token cap, thinking and temperature
// from spec and the call's options. A thinking call gets the budget (the
// spec's when the options give none) with MaxTokens the answer's cap on top
// of it, and temperature 1 on Anthropic, as Anthropic requires.
func (c *Client) settle(spec ModelSpec, o *options, req *model.Request) error {
	think := spec.ThinkByDefault
	switch o.thinking {
	case thinkingOn:
		think = true
	case thinkingOff:
		think = false
	}
	if think && !spec.Capabilities.Thinking {
		return fmt.Errorf("%w: %q (%s %s); use a thinking-capable model such as \"thinking\" or set Capabilities.Thinking",
			ErrThinkingUnsupported, spec.Name, spec.Provider, spec.ID)
	}
	req.Model = spec.ID
	req.MaxTokens = cmp.Or(max(o.maxTokens, 0), spec.MaxTokens, c.maxTokens)
	req.Temperature, req.Thinking = nil, nil
	if o.hasTemperature {
		req.Temperature = &o.temperature
	}
	if think {
		budget := o.thinkingBudget
		if budget <= 0 {
			budget = spec.thinkingBudget()
		}
		req.Thinking = &model.Thinking{Budget: budget}
		if spec.Provider == ProviderAnthropic {
			one := 1.0
			req.Temperature = &one
		}
	}
	return nil
}

// generate is the one path of every model call: it settles req for spec
// and calls m under the resilience policy, streaming to o's chunk receiver
// when there is one.
func (c *Client) generate(ctx context.Context, spec ModelSpec, m model.Model, req *model.Request, o *options) (*model.Response, error) {
	if err := c.settle(spec, o, req); err != nil {
		return nil, err
	}
	var start time.Time
	debug := c.log.Core().Enabled(zap.DebugLevel)
	if debug {
		start = time.Now()
	}
	resp, err := c.invoke(ctx, spec, m, req, o.sink(ctx), o.final)
	if err != nil {
		if debug {
			c.log.Debug("model call failed", zap.String("model", spec.Name), zap.String("provider", spec.Provider),
				zap.Duration("duration", time.Since(start)), zap.Error(err))
		}
		var sa *streamAborted
		if errors.As(err, &sa) {
			return nil, sa.err
		}
		return nil, err
	}
	if ce := c.log.Check(zap.DebugLevel, "model call"); ce != nil {
		ce.Write(zap.String("model", spec.Name), zap.String("provider", spec.Provider), zap.String("model_id", spec.ID),
			zap.Duration("duration", time.Since(start)), zap.Int("input_tokens", resp.Usage.InputTokens),
			zap.Int("output_tokens", resp.Usage.OutputTokens), zap.Int("thinking_tokens", resp.Usage.ThinkingTokens))
	}
	return resp, nil
}

// invoke calls the provider model under the resilience policy, turning its
// errors into classified *ProviderErrors. With a chunk receiver the call is
// streamed and each attempt streams afresh; with final set, an attempt that
// has delivered chunks is not retried (its chunks cannot be taken back).
func (c *Client) invoke(ctx context.Context, spec ModelSpec, m model.Model, req *model.Request,
	sink func(model.Chunk) error, final bool) (*model.Response, error) {
	return c.guard.do(ctx, spec, func(ctx context.Context) (*model.Response, error) {
		var out *httpOutcome
		if c.instrumented[spec.Provider] {
			ctx, out = withHTTPOutcome(ctx)
		}
		var resp *model.Response
		var err error
		emitted := false
		if sink == nil {
			resp, err = m.Generate(ctx, req)
		} else {
			resp, emitted, err = streamTo(ctx, m, req, sink)
		}
		if err != nil {
			err = classify(providerError(ctx, spec, out, err))
			if final && emitted {
				err = resilience.MarkPermanent(err)
			}
			return nil, err
		}
		if resp == nil {
			return nil, resilience.MarkPermanent(fmt.Errorf("%w (%s %s)", ErrEmptyResponse, spec.Provider, spec.ID))
		}
		if resp.Model == "" {
			resp.Model = spec.ID
		}
		return resp, nil
	})
}

// streamTo streams one call of m, handing every non-empty delta to sink, and
// returns the complete reply of the last chunk and whether any delta was
// delivered.
func streamTo(ctx context.Context, m model.Model, req *model.Request, sink func(model.Chunk) error) (*model.Response, bool, error) {
	emitted := false
	for ch, err := range m.Stream(ctx, req) {
		if err != nil {
			return nil, emitted, err
		}
		switch ch.Kind {
		case model.ChunkDone:
			if ch.Response == nil {
				return nil, emitted, model.ErrIncompleteStream
			}
			return ch.Response, emitted, nil
		case model.ChunkText, model.ChunkThinking:
			if ch.Text == "" {
				continue
			}
		case model.ChunkToolCall:
			if ch.ToolCall == nil {
				continue
			}
		}
		emitted = true
		if err := sink(ch); err != nil {
			return nil, emitted, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, emitted, err
	}
	return nil, emitted, model.ErrIncompleteStream
}

// responseOf describes a model's reply to a call of spec as a Response.
func responseOf(spec ModelSpec, r *model.Response) *Response {
	return &Response{Text: r.Text(), Thinking: r.Message.Thinking(), ToolCalls: r.ToolCalls(),
		StopReason: string(r.FinishReason), Usage: r.Usage, Model: spec.Name, Provider: spec.Provider,
		ModelID: spec.ID, ResponseID: r.ID, Message: r.Message}
}
