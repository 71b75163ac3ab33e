// Package lcmodel translates between agentgraph's model vocabulary (package
// agent/model) and langchaingo's llms types: requests, responses, usage and
// streamed chunks. It is shared by the agent.Client and the provider
// adapters, so that both read usage and split streams the same way.
package lcmodel

import (
	"encoding/json"
	"math"

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

// Count returns the token count of v as Usage reads it: a number of any of
// the types the clients use (json.Number included), clamped to
// [0, math.MaxInt]; 0 for anything else.
func Count(v any) int { return intOf(v) }

// intOf returns a token count of v, a number of any of the types the
// clients use, clamped to [0, math.MaxInt]: a negative, NaN or overflowing
// figure of a server cannot make usage negative or wrap.
func intOf(v any) int {
	switch n := v.(type) {
	case int:
		return max(n, 0)
	case int32:
		return max(int(n), 0)
	case int64:
		return clampInt64(n)
	case uint32:
		return clampUint64(uint64(n))
	case uint64:
		return clampUint64(n)
	case float64:
		return clampFloat(n)
	case float32:
		return clampFloat(float64(n))
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return clampInt64(i)
		}
		f, _ := n.Float64()
		return clampFloat(f)
	}
	return 0
}

func clampInt64(n int64) int {
	if n <= 0 {
		return 0
	}
	if uint64(n) > math.MaxInt {
		return math.MaxInt
	}
	return int(n)
}

func clampUint64(n uint64) int {
	if n > math.MaxInt {
		return math.MaxInt
	}
	return int(n)
}

func clampFloat(f float64) int {
	switch {
	case !(f > 0): // NaN too
		return 0
	case f >= math.MaxInt: // float64(math.MaxInt) is 2^63
		return math.MaxInt
	}
	return int(f)
}
