package agent

import (
	"encoding/json"

	"github.com/tmc/langchaingo/llms"
)

// TokenUsage counts the tokens of one or more model calls.
//
// The fields are disjoint, so every token is counted once: InputTokens are
// prompt tokens that were neither read from nor written to the provider's
// prompt cache, OutputTokens are answer tokens, and ThinkingTokens are
// reasoning tokens that the provider reports apart from the answer. Total adds
// all five and equals the provider's own total where it reports one.
//
// Providers that bill thinking as output without reporting it apart
// (Anthropic) count it in OutputTokens and leave ThinkingTokens zero.
//
// A TokenUsage field of a graph state sums itself across nodes through its
// Merge method; the zero value is no usage.
type TokenUsage struct {
	// InputTokens are uncached prompt tokens.
	InputTokens int `json:"input_tokens"`
	// OutputTokens are generated answer tokens.
	OutputTokens int `json:"output_tokens"`
	// ThinkingTokens are reasoning tokens reported apart from the answer.
	ThinkingTokens int `json:"thinking_tokens"`
	// CacheReadTokens are prompt tokens served from the provider's cache.
	CacheReadTokens int `json:"cache_read_tokens"`
	// CacheWriteTokens are prompt tokens written to the provider's cache.
	CacheWriteTokens int `json:"cache_write_tokens"`
}

// Total returns the sum of all counted tokens.
func (u TokenUsage) Total() int {
	return u.InputTokens + u.OutputTokens + u.ThinkingTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// Merge returns the field-wise sum of u and v. A graph state field of type
// TokenUsage is merged with it, so nodes that each return the usage of their
// own calls accumulate the usage of the whole run.
func (u TokenUsage) Merge(v TokenUsage) TokenUsage {
	return TokenUsage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		ThinkingTokens:   u.ThinkingTokens + v.ThinkingTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// IsZero reports whether u counts no tokens.
func (u TokenUsage) IsZero() bool { return u == TokenUsage{} }

// MarshalJSON encodes the usage with an extra total_tokens member, the shape
// an API response reports to its clients.
func (u TokenUsage) MarshalJSON() ([]byte, error) {
	type fields TokenUsage
	return json.Marshal(struct {
		fields
		TotalTokens int `json:"total_tokens"`
	}{fields(u), u.Total()})
}

// UsageKey is the GenerationInfo key under which a model reports its usage as
// a TokenUsage value. Custom llms.Model implementations (and llmtest) set it to
// report usage exactly; for the langchaingo providers the usage is read from
// their own keys.
const UsageKey = "agentgraph.usage"

// UsageOf reads and normalises the token usage of a langchaingo response.
//
// langchaingo reports usage in each choice's GenerationInfo with keys that
// differ per provider: OpenAI, Ollama and Google use PromptTokens and
// CompletionTokens (OpenAI adds ReasoningTokens and PromptCachedTokens, both
// included in its totals); Anthropic uses InputTokens, OutputTokens,
// CacheReadInputTokens and CacheCreationInputTokens (cache tokens excluded from
// InputTokens); Bedrock uses input_tokens and output_tokens. Every choice of a
// response repeats the same figures, so the first choice that has any is used.
func UsageOf(resp *llms.ContentResponse) TokenUsage {
	if resp == nil {
		return TokenUsage{}
	}
	for _, c := range resp.Choices {
		if c == nil || len(c.GenerationInfo) == 0 {
			continue
		}
		if u, ok := usageFromInfo(c.GenerationInfo); ok {
			return u
		}
	}
	return TokenUsage{}
}

func usageFromInfo(info map[string]any) (TokenUsage, bool) {
	if u, ok := info[UsageKey].(TokenUsage); ok {
		return u, true
	}
	if _, ok := info["InputTokens"]; ok { // Anthropic
		return TokenUsage{
			InputTokens:      intOf(info["InputTokens"]),
			OutputTokens:     intOf(info["OutputTokens"]),
			CacheReadTokens:  intOf(info["CacheReadInputTokens"]),
			CacheWriteTokens: intOf(info["CacheCreationInputTokens"]),
		}, true
	}
	if _, ok := info["PromptTokens"]; ok { // OpenAI, Ollama, Google
		prompt := intOf(info["PromptTokens"])
		completion := intOf(info["CompletionTokens"])
		reasoning := intOf(info["ReasoningTokens"])
		if reasoning == 0 {
			reasoning = intOf(info["ThinkingTokens"])
		}
		cached := intOf(info["PromptCachedTokens"])
		if cached > prompt {
			cached = prompt
		}
		if reasoning > completion {
			reasoning = completion
		}
		return TokenUsage{
			InputTokens:     prompt - cached,
			OutputTokens:    completion - reasoning,
			ThinkingTokens:  reasoning,
			CacheReadTokens: cached,
		}, true
	}
	if _, ok := info["input_tokens"]; ok { // Bedrock
		return TokenUsage{
			InputTokens:  intOf(info["input_tokens"]),
			OutputTokens: intOf(info["output_tokens"]),
		}, true
	}
	return TokenUsage{}, false
}

func intOf(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int32:
		return int(n)
	case int64:
		return int(n)
	case uint32:
		return int(n)
	case uint64:
		return int(n)
	case float64:
		return int(n)
	case float32:
		return int(n)
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	}
	return 0
}
