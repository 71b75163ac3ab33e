package agent

import (
	"github.com/agentgraph/agentgraph/agent/internal/lcmodel"
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
const UsageKey = lcmodel.UsageKey

// UsageOf reads and normalises the token usage of a langchaingo response.
//
// langchaingo reports usage in each choice's GenerationInfo with keys that
// differ per provider: OpenAI, Ollama and Google use PromptTokens and
// CompletionTokens (OpenAI adds ReasoningTokens and PromptCachedTokens, both
// included in its totals); Anthropic uses InputTokens, OutputTokens,
// CacheReadInputTokens and CacheCreationInputTokens (cache tokens excluded from
// InputTokens); Bedrock uses input_tokens and output_tokens. Every choice of a
// response repeats the same figures, so the first choice that has any is used.
func UsageOf(resp *llms.ContentResponse) TokenUsage { return lcmodel.Usage(resp) }
