package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent/internal/lcmodel"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/resilience"
	"github.com/tmc/langchaingo/llms"
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
	// Providers maps provider names (ModelSpec.Provider) to langchaingo
	// models; any llms.Model can serve a provider. Entries here win over the
	// clients built from OpenAI, Anthropic and Ollama.
	Providers map[string]llms.Model
	// Model, when set, serves every provider that has no entry of its own. A
	// single scripted model (see package llmtest) behind every alias is the
	// usual test setup.
	Model llms.Model
	// OpenAI, when set, builds the "openai" provider.
	OpenAI *OpenAIConfig
	// Anthropic, when set, builds the "anthropic" provider.
	Anthropic *AnthropicConfig
	// Ollama, when set, builds the "ollama" provider.
	Ollama *OllamaConfig
	// HTTPClient is the base HTTP client of the providers built here. Nil
	// means a client over http.DefaultTransport with no overall timeout (the
	// resilience policy times out each attempt).
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

// Client calls language models by name through langchaingo, normalising
// usage, keeping thinking apart from the answer, streaming chunks, and
// running every call through the LLM resilience policy. It is safe for
// concurrent use.
type Client struct {
	reg          *Registry
	providers    map[string]llms.Model
	instrumented map[string]bool // providers built here, whose HTTP answers are recorded
	fallback     llms.Model
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
func defaultModelFor(fallback bool, providers map[string]llms.Model) string {
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

// Response is the outcome of one model call.
type Response struct {
	// Text is the answer, without any thinking.
	Text string
	// Thinking is the model's extended thinking, empty when it did not think.
	Thinking string
	// ToolCalls are the tool calls the model asked for.
	ToolCalls []llms.ToolCall
	// StopReason is the provider's reason for stopping, such as "end_turn".
	StopReason string
	// Usage counts the call's tokens.
	Usage TokenUsage
	// Model is the name the call resolved (such as "sonnet").
	Model string
	// Provider and ModelID say which provider model answered.
	Provider, ModelID string
	// Raw is langchaingo's response, for provider-specific details.
	Raw *llms.ContentResponse
}

// callMessages backs the messages of one call: a system message and the
// human prompt, with their parts, in one allocation.
type callMessages struct {
	msgs  [2]llms.MessageContent
	parts [2]llms.ContentPart
}

// messages returns the system message (when system is not empty) and the
// human prompt, each with one text part, as llms.TextParts builds them.
func messages(system, prompt string) []llms.MessageContent {
	if system == "" {
		cm := new(callMessages)
		cm.parts[0] = llms.TextContent{Text: prompt}
		cm.msgs[0] = llms.MessageContent{Role: llms.ChatMessageTypeHuman, Parts: cm.parts[0:1:1]}
		return cm.msgs[0:1:1]
	}
	return withSystem(llms.TextParts(llms.ChatMessageTypeSystem, system), prompt)
}

// withSystem returns a prepared system message and the human prompt.
func withSystem(system llms.MessageContent, prompt string) []llms.MessageContent {
	cm := new(callMessages)
	cm.parts[1] = llms.TextContent{Text: prompt}
	cm.msgs[0] = system
	cm.msgs[1] = llms.MessageContent{Role: llms.ChatMessageTypeHuman, Parts: cm.parts[1:2:2]}
	return cm.msgs[:]
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
func (c *Client) resolve(name string) (ModelSpec, llms.Model, error) {
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

// callOptions turns the options into langchaingo call options for spec.
// room is the number of options the caller appends after them.
func (c *Client) callOptions(spec ModelSpec, o *options, room int) ([]llms.CallOption, error) {
	think := spec.ThinkByDefault
	switch o.thinking {
	case thinkingOn:
		think = true
	case thinkingOff:
		think = false
	}
	if think && !spec.Capabilities.Thinking {
		return nil, fmt.Errorf("%w: %q (%s %s); use a thinking-capable model such as \"thinking\" or set Capabilities.Thinking",
			ErrThinkingUnsupported, spec.Name, spec.Provider, spec.ID)
	}
	maxTokens := o.maxTokens
	if maxTokens <= 0 {
		maxTokens = spec.MaxTokens
	}
	if maxTokens <= 0 {
		maxTokens = c.maxTokens
	}
	co := make([]llms.CallOption, 0, 4+room+2+len(o.extra))
	co = append(co, llms.WithModel(spec.ID))
	if think {
		budget := o.thinkingBudget
		if budget <= 0 {
			budget = spec.thinkingBudget()
		}
		// Anthropic needs max_tokens above the budget and temperature 1.
		co = append(co, llms.WithThinkingBudget(budget), llms.WithMaxTokens(budget+maxTokens))
		if spec.Provider == ProviderAnthropic {
			co = append(co, llms.WithTemperature(1))
		} else if o.hasTemperature {
			co = append(co, llms.WithTemperature(o.temperature))
		}
	} else {
		co = append(co, llms.WithMaxTokens(maxTokens))
		if o.hasTemperature {
			co = append(co, llms.WithTemperature(o.temperature))
		}
	}
	return co, nil
}

// generate is the one path of every model call. extra call options (from the
// structured caller) go before the caller's own.
func (c *Client) generate(ctx context.Context, msgs []llms.MessageContent, o *options, extra []llms.CallOption) (*Response, error) {
	spec, m, err := c.resolve(o.model)
	if err != nil {
		return nil, err
	}
	return c.generateWith(ctx, spec, m, msgs, o, extra)
}

// generateWith is generate for a resolved model.
func (c *Client) generateWith(ctx context.Context, spec ModelSpec, m llms.Model, msgs []llms.MessageContent, o *options, extra []llms.CallOption) (*Response, error) {
	co, err := c.callOptions(spec, o, len(extra))
	if err != nil {
		return nil, err
	}
	co = append(co, extra...)
	split := o.splitter
	if split == nil && o.stream {
		split = streamSplitter(ctx, spec, o.onChunk)
	}
	if split != nil {
		co = append(co, split.Options()...)
	}
	co = append(co, o.extra...)

	var start time.Time
	debug := c.log.Core().Enabled(zap.DebugLevel)
	if debug {
		start = time.Now()
	}
	raw, err := c.invoke(ctx, spec, m, msgs, co, split, o.splitter != nil)
	if err != nil && debug {
		c.log.Debug("model call failed", zap.String("model", spec.Name), zap.String("provider", spec.Provider),
			zap.Duration("duration", time.Since(start)), zap.Error(err))
	}
	if err != nil {
		return nil, err
	}
	resp, err := responseOf(spec, raw)
	if err != nil {
		return nil, err
	}
	if split != nil && len(resp.ToolCalls) > 0 {
		calls := make([]model.ToolCall, len(resp.ToolCalls))
		for i, tc := range resp.ToolCalls {
			calls[i] = lcmodel.ToolCall(tc)
		}
		if err := split.Finish(calls); err != nil {
			var sa *streamAborted
			if errors.As(err, &sa) {
				return nil, sa.err
			}
			return nil, err
		}
	}
	if !debug {
		return resp, nil
	}
	if ce := c.log.Check(zap.DebugLevel, "model call"); ce != nil {
		ce.Write(zap.String("model", spec.Name), zap.String("provider", spec.Provider), zap.String("model_id", spec.ID),
			zap.Duration("duration", time.Since(start)), zap.Int("input_tokens", resp.Usage.InputTokens),
			zap.Int("output_tokens", resp.Usage.OutputTokens), zap.Int("thinking_tokens", resp.Usage.ThinkingTokens))
	}
	return resp, nil
}

// invoke calls the provider model under the resilience policy, turning its
// errors into classified *ProviderErrors. A streamed call's splitter starts
// each attempt afresh; with final set, an attempt that has delivered chunks
// is not retried (its chunks cannot be taken back).
func (c *Client) invoke(ctx context.Context, spec ModelSpec, m llms.Model, msgs []llms.MessageContent, co []llms.CallOption,
	split *lcmodel.Splitter, final bool) (*llms.ContentResponse, error) {
	return c.guard.do(ctx, spec, func(ctx context.Context) (*llms.ContentResponse, error) {
		var out *httpOutcome
		if c.instrumented[spec.Provider] {
			ctx, out = withHTTPOutcome(ctx)
		}
		if split != nil {
			split.Reset()
		}
		resp, err := m.GenerateContent(ctx, msgs, co...)
		if err != nil {
			err = classify(providerError(ctx, spec, out, err))
			if final && split.Emitted() {
				err = resilience.MarkPermanent(err)
			}
			return nil, err
		}
		return resp, nil
	})
}

// responseOf reads answer, thinking, tool calls and usage out of langchaingo's
// response. Anthropic returns one choice per content block (a thinking block
// has empty Content and its text in GenerationInfo["ThinkingContent"]), so
// its text blocks are joined; other providers return alternatives, of which
// the first is used.
func responseOf(spec ModelSpec, raw *llms.ContentResponse) (*Response, error) {
	if raw == nil || len(raw.Choices) == 0 {
		return nil, fmt.Errorf("%w (%s %s)", ErrEmptyResponse, spec.Provider, spec.ID)
	}
	r := &Response{Model: spec.Name, Provider: spec.Provider, ModelID: spec.ID, Raw: raw, Usage: UsageOf(raw)}
	if len(raw.Choices) == 1 && raw.Choices[0] != nil {
		// One choice, the usual case: its texts as they are.
		ch := raw.Choices[0]
		r.Text, r.Thinking = lcmodel.ChoiceText(ch)
		r.ToolCalls = append(r.ToolCalls, ch.ToolCalls...)
		r.StopReason = ch.StopReason
		return r, nil
	}
	var text, thinking strings.Builder
	for _, ch := range raw.Choices {
		if ch == nil {
			continue
		}
		t, th := lcmodel.ChoiceText(ch)
		text.WriteString(t)
		if th != "" {
			if thinking.Len() > 0 {
				thinking.WriteString("\n\n")
			}
			thinking.WriteString(th)
		}
		r.ToolCalls = append(r.ToolCalls, ch.ToolCalls...)
		if ch.StopReason != "" {
			r.StopReason = ch.StopReason
		}
		if spec.Provider != ProviderAnthropic && (t != "" || len(ch.ToolCalls) > 0) {
			break
		}
	}
	r.Text, r.Thinking = text.String(), thinking.String()
	return r, nil
}
