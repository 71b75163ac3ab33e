package provider

import (
	"fmt"
	"os"
	"strings"
)

// Environment variables read by FromEnv (and by agent.ConfigFromEnv).
const (
	// EnvModel chooses the model as "provider:model-id", such as
	// "openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-20241022" or
	// "ollama:qwen3", or as a provider name alone for its default model. It
	// overrides the choice by configured provider.
	EnvModel         = "AGENTGRAPH_MODEL"
	EnvOpenAIKey     = "OPENAI_API_KEY"
	EnvOpenAIBaseURL = "OPENAI_BASE_URL"
	EnvOpenAIOrg     = "OPENAI_ORGANIZATION"
	EnvAnthropicKey  = "ANTHROPIC_API_KEY"
	EnvAnthropicURL  = "ANTHROPIC_BASE_URL"
	EnvOllamaHost    = "OLLAMA_HOST"
)

// Configured returns the names of the providers the environment configures,
// in the order anthropic, openai, ollama: those whose ANTHROPIC_API_KEY,
// OPENAI_API_KEY or OLLAMA_HOST is set.
func Configured() []string {
	var names []string
	if os.Getenv(EnvAnthropicKey) != "" {
		names = append(names, NameAnthropic)
	}
	if os.Getenv(EnvOpenAIKey) != "" {
		names = append(names, NameOpenAI)
	}
	if os.Getenv(EnvOllamaHost) != "" {
		names = append(names, NameOllama)
	}
	return names
}

// DefaultModel returns the "provider:model-id" of a provider's default
// model, such as "openai:gpt-4o", or "" for an unknown provider.
func DefaultModel(provider string) string {
	switch provider {
	case NameOpenAI:
		return NameOpenAI + ":" + DefaultOpenAIModel
	case NameAnthropic:
		return NameAnthropic + ":" + DefaultAnthropicModel
	case NameOllama:
		return NameOllama + ":" + DefaultOllamaModel
	}
	return ""
}

// FromEnv returns the model the environment configures:
//
//	AGENTGRAPH_MODEL                                       "provider:model-id" (or a provider name): this model
//	OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORGANIZATION   OpenAI, or any OpenAI-compatible server
//	ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL                  Anthropic
//	OLLAMA_HOST                                            Ollama
//
// Without AGENTGRAPH_MODEL the model follows the one configured provider:
// only OPENAI_API_KEY set gives DefaultOpenAIModel on OpenAI, only
// ANTHROPIC_API_KEY DefaultAnthropicModel, only OLLAMA_HOST
// DefaultOllamaModel. With none or several configured, or a provider chosen
// whose settings are missing, the error names every fix.
func FromEnv() (*Model, error) {
	spec := strings.TrimSpace(os.Getenv(EnvModel))
	configured := Configured()
	if spec == "" {
		switch len(configured) {
		case 0:
			return nil, fmt.Errorf("provider: no model configured: set %s (OpenAI or a compatible server), %s or %s, "+
				"or choose one with %s=provider:model-id (such as %s)", EnvOpenAIKey, EnvAnthropicKey, EnvOllamaHost, EnvModel, DefaultModel(NameOpenAI))
		case 1:
			spec = configured[0]
		default:
			return nil, fmt.Errorf("provider: several providers configured (%s): choose one with %s=provider:model-id (such as %s), "+
				"or unset the others", strings.Join(configured, ", "), EnvModel, DefaultModel(configured[0]))
		}
	}
	name, id, _ := strings.Cut(spec, ":")
	switch name {
	case NameOpenAI:
		if os.Getenv(EnvOpenAIKey) == "" {
			return nil, missing(spec, EnvOpenAIKey, configured)
		}
		return OpenAI(OpenAIConfig{APIKey: os.Getenv(EnvOpenAIKey), BaseURL: os.Getenv(EnvOpenAIBaseURL),
			Organization: os.Getenv(EnvOpenAIOrg), Model: id})
	case NameAnthropic:
		if os.Getenv(EnvAnthropicKey) == "" {
			return nil, missing(spec, EnvAnthropicKey, configured)
		}
		return Anthropic(AnthropicConfig{APIKey: os.Getenv(EnvAnthropicKey), BaseURL: os.Getenv(EnvAnthropicURL), Model: id})
	case NameOllama:
		return Ollama(OllamaConfig{Host: os.Getenv(EnvOllamaHost), Model: id})
	}
	return nil, fmt.Errorf("provider: %s=%q: unknown provider %q: want %q, %q or %q before the colon, such as %s",
		EnvModel, spec, name, NameOpenAI, NameAnthropic, NameOllama, DefaultModel(NameOpenAI))
}

func missing(spec, env string, configured []string) error {
	var hint string
	if len(configured) > 0 {
		hint = fmt.Sprintf(", or set %s to a configured provider's model (configured: %s; such as %s)",
			EnvModel, strings.Join(configured, ", "), DefaultModel(configured[0]))
	} else {
		hint = fmt.Sprintf(", or change %s", EnvModel)
	}
	return fmt.Errorf("provider: model %q needs %s: set it%s", spec, env, hint)
}
