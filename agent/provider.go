package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/agent/internal/lcmodel"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/resilience"
)

// Environment variables read by ConfigFromEnv; the provider settings are
// those of package provider.
const (
	EnvOpenAIKey     = provider.EnvOpenAIKey
	EnvOpenAIBaseURL = provider.EnvOpenAIBaseURL
	EnvOpenAIOrg     = provider.EnvOpenAIOrg
	EnvAnthropicKey  = provider.EnvAnthropicKey
	EnvAnthropicURL  = provider.EnvAnthropicURL
	EnvOllamaHost    = provider.EnvOllamaHost
	// EnvDefaultModel sets Config.DefaultModel: a registry name or alias
	// (such as "sonnet") or "provider:model-id" (such as "openai:gpt-4o").
	EnvDefaultModel = provider.EnvModel
	EnvModelAliases = "AGENTGRAPH_MODELS"
)

const (
	defaultMaxTokens   = 4096
	defaultMaxAttempts = 3
)

// ConfigFromEnv builds a Config from the environment:
//
//	OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORGANIZATION   the OpenAI provider (set when the key is)
//	ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL                  the Anthropic provider (set when the key is)
//	OLLAMA_HOST                                            the Ollama provider (set when the host is)
//	AGENTGRAPH_MODEL                                       Config.DefaultModel: a name, alias, "provider:model-id" or a provider name
//	AGENTGRAPH_MODELS                                      extra aliases, "name=provider:model-id,..."
//
// Without AGENTGRAPH_MODEL the default model follows the configured
// provider (see Config.DefaultModel): only OPENAI_API_KEY set gives
// "openai:gpt-4o", only ANTHROPIC_API_KEY "sonnet", only OLLAMA_HOST
// "ollama:llama3.2".
//
// The registry is DefaultRegistry plus the aliases of AGENTGRAPH_MODELS, so
// AGENTGRAPH_MODELS="sonnet=openai:gpt-4o,haiku=openai:gpt-4o-mini" runs the
// built-in aliases on OpenAI.
func ConfigFromEnv() (Config, error) {
	var cfg Config
	if k := os.Getenv(EnvOpenAIKey); k != "" {
		cfg.OpenAI = &provider.OpenAIConfig{APIKey: k, BaseURL: os.Getenv(EnvOpenAIBaseURL), Organization: os.Getenv(EnvOpenAIOrg)}
	}
	if k := os.Getenv(EnvAnthropicKey); k != "" {
		cfg.Anthropic = &provider.AnthropicConfig{APIKey: k, BaseURL: os.Getenv(EnvAnthropicURL)}
	}
	if h := os.Getenv(EnvOllamaHost); h != "" {
		cfg.Ollama = &provider.OllamaConfig{Host: h}
	}
	cfg.DefaultModel = strings.TrimSpace(os.Getenv(EnvDefaultModel))
	if d := provider.DefaultModel(cfg.DefaultModel); d != "" {
		cfg.DefaultModel = d // a provider name alone: its default model
	}
	cfg.Registry = DefaultRegistry()
	if err := RegisterAliases(cfg.Registry, os.Getenv(EnvModelAliases)); err != nil {
		return Config{}, fmt.Errorf("agent: %s: %w", EnvModelAliases, err)
	}
	return cfg, nil
}

// RegisterAliases registers the aliases of a list "name=provider:model-id"
// separated by commas (or semicolons), such as
// "fast=openai:gpt-4o-mini,local=ollama:llama3.2". Each gets the provider's
// usual capabilities.
func RegisterAliases(r *Registry, list string) error {
	for item := range strings.FieldsFuncSeq(list, func(c rune) bool { return c == ',' || c == ';' }) {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, target, ok := strings.Cut(item, "=")
		provider, id, ok2 := strings.Cut(strings.TrimSpace(target), ":")
		if !ok || !ok2 || strings.TrimSpace(name) == "" || provider == "" || id == "" {
			return fmt.Errorf("alias %q: want name=provider:model-id, such as sonnet=openai:gpt-4o", item)
		}
		s := adHocSpec(target, provider, id)
		s.Name = strings.TrimSpace(name)
		if err := r.Register(s); err != nil {
			return err
		}
	}
	return nil
}

// buildProviders creates the configured provider models (package
// agent/provider). Their HTTP client, the provider config's or else
// cfg.HTTPClient, records each failed answer's status and Retry-After for
// the error classifier.
func buildProviders(cfg Config) (map[string]model.Model, error) {
	out := make(map[string]model.Model, 3)
	hc := func(own *http.Client) *http.Client { return instrumentedClient(cmp.Or(own, cfg.HTTPClient)) }
	if c := cfg.OpenAI; c != nil {
		if c.APIKey == "" {
			return nil, fmt.Errorf("agent: Config.OpenAI.APIKey is empty: set it or %s", EnvOpenAIKey)
		}
		if c.Model != "" {
			return nil, modelSet("OpenAI", ProviderOpenAI, c.Model)
		}
		pc := *c
		pc.HTTPClient = hc(c.HTTPClient)
		m, err := provider.OpenAI(pc)
		if err != nil {
			return nil, fmt.Errorf("agent: Config.OpenAI: %w", err)
		}
		out[ProviderOpenAI] = m
	}
	if c := cfg.Anthropic; c != nil {
		if c.APIKey == "" {
			return nil, fmt.Errorf("agent: Config.Anthropic.APIKey is empty: set it or %s", EnvAnthropicKey)
		}
		if c.Model != "" {
			return nil, modelSet("Anthropic", ProviderAnthropic, c.Model)
		}
		pc := *c
		pc.HTTPClient = hc(c.HTTPClient)
		m, err := provider.Anthropic(pc)
		if err != nil {
			return nil, fmt.Errorf("agent: Config.Anthropic: %w", err)
		}
		out[ProviderAnthropic] = m
	}
	if c := cfg.Ollama; c != nil {
		if c.Model != "" {
			return nil, modelSet("Ollama", ProviderOllama, c.Model)
		}
		pc := *c
		pc.HTTPClient = hc(c.HTTPClient)
		m, err := provider.Ollama(pc)
		if err != nil {
			return nil, fmt.Errorf("agent: Config.Ollama: %w", err)
		}
		out[ProviderOllama] = m
	}
	return out, nil
}

// modelSet is the error of a provider config of Config whose Model is
// set: a Client serves many models of a provider, and the registry names
// the model of each call.
func modelSet(field, provider, id string) error {
	return fmt.Errorf("agent: Config.%s.Model is %q, but a Client names the model of each call through its Registry; leave it empty and set Config.DefaultModel to %q (or register an alias)", field, id, provider+":"+id)
}

// httpOutcome is filled by statusTransport with the last failed HTTP answer
// of one model call; the call finds it through its context.
type httpOutcome struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
}

type httpOutcomeKey struct{}

func withHTTPOutcome(ctx context.Context) (context.Context, *httpOutcome) {
	h := new(httpOutcome)
	return context.WithValue(ctx, httpOutcomeKey{}, h), h
}

func (h *httpOutcome) get() (int, time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.status, h.retryAfter
}

type statusTransport struct{ base http.RoundTripper }

func (t statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	if h, ok := req.Context().Value(httpOutcomeKey{}).(*httpOutcome); ok {
		h.mu.Lock()
		h.status, h.retryAfter = resp.StatusCode, retryAfterOf(resp.Header, time.Now())
		h.mu.Unlock()
	}
	return resp, nil
}

func instrumentedClient(base *http.Client) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base //nolint:govet // copying the exported configuration is intended
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = statusTransport{base: rt}
	return c
}

// retryAfterOf reads retry-after-ms (OpenAI) or Retry-After (seconds or an
// HTTP date).
func retryAfterOf(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

var statusInMessage = regexp.MustCompile(`status code: (\d{3})`)

// providerError turns an error of a model call into a *ProviderError with the
// HTTP status (from the transport, else from langchaingo's message) and the
// Retry-After hint. Errors of the caller's own context pass through as they
// are, and so does the error with which a stream's receiver stopped the call.
func providerError(ctx context.Context, spec ModelSpec, out *httpOutcome, err error) error {
	var sa *streamAborted
	if errors.As(err, &sa) {
		return resilience.Mark(sa.err, resilience.Canceled)
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return err
	}
	var pe *ProviderError
	if errors.As(err, &pe) {
		if pe.Provider == "" || pe.Model == "" {
			cp := *pe
			if cp.Provider == "" {
				cp.Provider = spec.Provider
			}
			if cp.Model == "" {
				cp.Model = spec.ID
			}
			return &cp
		}
		return err
	}
	pe = &ProviderError{Provider: spec.Provider, Model: spec.ID, Err: err}
	if out != nil {
		pe.StatusCode, pe.RetryAfter = out.get()
	}
	if pe.StatusCode == 0 {
		if m := statusInMessage.FindStringSubmatch(err.Error()); m != nil {
			pe.StatusCode, _ = strconv.Atoi(m[1])
		}
	}
	if pe.StatusCode == 0 && lcmodel.Class(err) == resilience.RateLimited {
		pe.StatusCode = http.StatusTooManyRequests
	}
	return pe
}
