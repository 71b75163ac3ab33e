// Package lcmodel translates between agentgraph's model vocabulary (package
// agent/model) and langchaingo's llms types: requests, responses, usage and
// streamed chunks. It is shared by the agent.Client and the provider
// adapters, so that both read usage and split streams the same way.
package lcmodel

import (
	"encoding/json"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/tmc/langchaingo/llms"
)

// UsageKey is the GenerationInfo key under which an llms.Model reports its
// usage as a model.Usage value (agent.UsageKey).
const UsageKey = "agentgraph.usage"

// Usage reads and normalises the token usage of a langchaingo response.
//
// langchaingo reports usage in each choice's GenerationInfo with keys that
// differ per provider: OpenAI, Ollama and Google use PromptTokens and
// CompletionTokens (OpenAI adds ReasoningTokens and PromptCachedTokens, both
// included in its totals); Anthropic uses InputTokens, OutputTokens,
// CacheReadInputTokens and CacheCreationInputTokens (cache tokens excluded
// from InputTokens); Bedrock uses input_tokens and output_tokens. Every choice
// of a response repeats the same figures, so the first choice that has any is
// used.
func Usage(resp *llms.ContentResponse) model.Usage {
	if resp == nil {
		return model.Usage{}
	}
	for _, c := range resp.Choices {
		if c == nil || len(c.GenerationInfo) == 0 {
			continue
		}
		if u, ok := usageFromInfo(c.GenerationInfo); ok {
			return u
		}
	}
	return model.Usage{}
}

func usageFromInfo(info map[string]any) (model.Usage, bool) {
	if u, ok := info[UsageKey].(model.Usage); ok {
		return u, true
	}
	if _, ok := info["InputTokens"]; ok { // Anthropic
		return model.Usage{
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
		return model.Usage{
			InputTokens:     prompt - cached,
			OutputTokens:    completion - reasoning,
			ThinkingTokens:  reasoning,
			CacheReadTokens: cached,
		}, true
	}
	if _, ok := info["input_tokens"]; ok { // Bedrock
		return model.Usage{
			InputTokens:  intOf(info["input_tokens"]),
			OutputTokens: intOf(info["output_tokens"]),
		}, true
	}
	return model.Usage{}, false
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
