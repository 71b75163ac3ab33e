package agent

import (
	"encoding/json"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/tmc/langchaingo/llms"
)

// TokenUsage counts the tokens of one or more model calls. It is
// [model.Usage]; see there.
type TokenUsage = model.Usage

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
