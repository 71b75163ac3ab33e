package agent

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentgraph/agentgraph/agent/internal/lcmodel"
)

// Provider names used in ModelSpec.Provider and as keys of Config.Providers.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderOllama    = "ollama"
)

// Capabilities say what a model can do beyond plain text generation.
type Capabilities struct {
	// Thinking reports support for extended thinking (reasoning before the
	// answer, returned apart from it).
	Thinking bool
	// ThinkingBudget is the thinking token budget used when thinking is on and
	// the call names no budget. Zero means 10000.
	ThinkingBudget int
	// JSONMode reports a native JSON output mode that the structured caller
	// switches on (OpenAI response_format, Ollama format). Anthropic has none.
	JSONMode bool
	// ToolCalling reports native tool calling, which the structured caller uses
	// when called with WithOutputMode(OutputTool).
	ToolCalling bool
}

// ModelSpec describes one model the client can call: which provider serves it,
// under which provider model id, and what it can do.
type ModelSpec struct {
	// Name is the name callers use, such as "sonnet". Required.
	Name string
	// Aliases are further names for the same spec, such as "claude-sonnet".
	Aliases []string
	// Provider names the provider that serves the model: ProviderOpenAI,
	// ProviderAnthropic, ProviderOllama, or any key of Config.Providers.
	// Required.
	Provider string
	// ID is the provider's model id, such as "claude-sonnet-4-20250514".
	// Required.
	ID string
	// Capabilities say what the model supports.
	Capabilities Capabilities
	// ThinkByDefault switches extended thinking on for every call of this
	// spec unless the call says WithoutThinking. It needs Capabilities.Thinking.
	ThinkByDefault bool
	// MaxTokens caps the answer length. Zero means Config.MaxTokens.
	MaxTokens int
}

const defaultThinkingBudget = 10000

func (s ModelSpec) thinkingBudget() int {
	if s.Capabilities.ThinkingBudget > 0 {
		return s.Capabilities.ThinkingBudget
	}
	return defaultThinkingBudget
}

// Registry maps model names and aliases to ModelSpecs. It is safe for
// concurrent use. The zero value is not usable; create one with NewRegistry
// or DefaultRegistry.
//
// Besides registered names, a registry resolves "provider:model-id" (for
// example "openai:gpt-4o" or "ollama:llama3.2") to an ad-hoc spec with the
// provider's usual capabilities, so any model can be used without
// registration.
type Registry struct {
	mu     sync.RWMutex
	byName map[string]ModelSpec
}

// NewRegistry returns a registry holding the given specs, or an error naming
// the first invalid one.
func NewRegistry(specs ...ModelSpec) (*Registry, error) {
	r := &Registry{byName: make(map[string]ModelSpec)}
	for _, s := range specs {
		if err := r.Register(s); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// DefaultRegistry returns a new registry with the built-in Anthropic aliases:
//
//	haiku     claude-3-5-haiku-20241022   (also "claude-haiku")
//	sonnet    claude-sonnet-4-20250514    (also "claude-sonnet"; thinking capable)
//	opus      claude-opus-4-20250514      (also "claude-opus"; thinking capable)
//	thinking  claude-sonnet-4-20250514    with extended thinking on, budget 10000
//
// Each call returns a fresh registry; changing one changes no other. Register
// a spec under one of these names to point it elsewhere, for example
// "sonnet" at an OpenAI model.
func DefaultRegistry() *Registry {
	r, err := NewRegistry(
		ModelSpec{Name: "haiku", Aliases: []string{"claude-haiku"}, Provider: ProviderAnthropic,
			ID: "claude-3-5-haiku-20241022", Capabilities: Capabilities{ToolCalling: true}},
		ModelSpec{Name: "sonnet", Aliases: []string{"claude-sonnet"}, Provider: ProviderAnthropic,
			ID: "claude-sonnet-4-20250514", Capabilities: Capabilities{Thinking: true, ThinkingBudget: defaultThinkingBudget, ToolCalling: true}},
		ModelSpec{Name: "opus", Aliases: []string{"claude-opus"}, Provider: ProviderAnthropic,
			ID: "claude-opus-4-20250514", Capabilities: Capabilities{Thinking: true, ThinkingBudget: defaultThinkingBudget, ToolCalling: true}},
		ModelSpec{Name: "thinking", Provider: ProviderAnthropic, ID: "claude-sonnet-4-20250514",
			Capabilities:   Capabilities{Thinking: true, ThinkingBudget: defaultThinkingBudget, ToolCalling: true},
			ThinkByDefault: true},
	)
	if err != nil {
		panic(err) // the built-in specs are valid
	}
	return r
}

// Register adds s under its name and aliases, replacing any spec registered
// under the same names before (this is how a built-in alias is repointed).
func (r *Registry) Register(s ModelSpec) error {
	switch {
	case strings.TrimSpace(s.Name) == "":
		return fmt.Errorf("agent: ModelSpec.Name is empty: give the model a name such as \"sonnet\"")
	case s.Provider == "":
		return fmt.Errorf("agent: model %q: ModelSpec.Provider is empty: set it to %q, %q, %q or a key of Config.Providers",
			s.Name, ProviderOpenAI, ProviderAnthropic, ProviderOllama)
	case s.ID == "":
		return fmt.Errorf("agent: model %q: ModelSpec.ID is empty: set the provider's model id", s.Name)
	case s.ThinkByDefault && !s.Capabilities.Thinking:
		return fmt.Errorf("agent: model %q: ThinkByDefault needs Capabilities.Thinking", s.Name)
	case strings.Contains(s.Name, ":"):
		return fmt.Errorf("agent: model name %q contains ':', which is reserved for \"provider:model-id\"", s.Name)
	}
	s.Aliases = slices.Clone(s.Aliases)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byName[s.Name] = s
	for _, a := range s.Aliases {
		r.byName[a] = s
	}
	return nil
}

// Lookup returns the spec for a name, alias or "provider:model-id".
func (r *Registry) Lookup(name string) (ModelSpec, bool) {
	r.mu.RLock()
	s, ok := r.byName[name]
	r.mu.RUnlock()
	if ok {
		return s, true
	}
	provider, id, ok := strings.Cut(name, ":")
	if !ok || provider == "" || id == "" {
		return ModelSpec{}, false
	}
	return adHocSpec(name, provider, id), true
}

// Names returns every registered name and alias, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// adHocSpec gives a "provider:model-id" name the provider's usual capabilities.
func adHocSpec(name, provider, id string) ModelSpec {
	s := ModelSpec{Name: name, Provider: provider, ID: id}
	switch provider {
	case ProviderOpenAI:
		s.Capabilities = Capabilities{JSONMode: true, ToolCalling: true, Thinking: lcmodel.IsReasoningModel(id)}
	case ProviderAnthropic:
		s.Capabilities = Capabilities{ToolCalling: true, Thinking: lcmodel.IsReasoningModel(id)}
	case ProviderOllama:
		s.Capabilities = Capabilities{JSONMode: true, ToolCalling: true}
	}
	return s
}
