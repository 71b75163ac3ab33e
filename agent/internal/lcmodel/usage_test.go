package lcmodel

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/google/go-cmp/cmp"
	"github.com/tmc/langchaingo/llms"
)

func TestUsagePerProvider(t *testing.T) {
	tests := []struct {
		name string
		info []map[string]any
		want model.Usage
	}{
		{"openai with reasoning and cache", []map[string]any{{
			"PromptTokens": 1700, "CompletionTokens": 5800, "TotalTokens": 7500,
			"ReasoningTokens": 5000, "ThinkingTokens": 5000, "PromptCachedTokens": 200}},
			model.Usage{InputTokens: 1500, OutputTokens: 800, ThinkingTokens: 5000, CacheReadTokens: 200}},
		{"anthropic blocks repeat the usage", []map[string]any{
			{"ThinkingContent": "hmm", "InputTokens": 25, "OutputTokens": 15, "CacheCreationInputTokens": 7, "CacheReadInputTokens": 3},
			{"InputTokens": 25, "OutputTokens": 15, "CacheCreationInputTokens": 7, "CacheReadInputTokens": 3}},
			model.Usage{InputTokens: 25, OutputTokens: 15, CacheReadTokens: 3, CacheWriteTokens: 7}},
		{"ollama", []map[string]any{{"PromptTokens": 11, "CompletionTokens": 4, "TotalTokens": 15, "ThinkingTokens": 0}},
			model.Usage{InputTokens: 11, OutputTokens: 4}},
		{"googleai int32", []map[string]any{{"input_tokens": int32(9), "output_tokens": int32(2), "PromptTokens": int32(9),
			"CompletionTokens": int32(2)}}, model.Usage{InputTokens: 9, OutputTokens: 2}},
		{"bedrock", []map[string]any{{"input_tokens": 8, "output_tokens": 3}}, model.Usage{InputTokens: 8, OutputTokens: 3}},
		{"exact usage key", []map[string]any{{UsageKey: model.Usage{InputTokens: 1, CacheWriteTokens: 2}}},
			model.Usage{InputTokens: 1, CacheWriteTokens: 2}},
		{"negative figures count as zero", []map[string]any{{"PromptTokens": -1000000, "CompletionTokens": -5,
			"ReasoningTokens": -5, "PromptCachedTokens": float64(-3)}}, model.Usage{}},
		{"huge figures saturate", []map[string]any{{"InputTokens": uint64(math.MaxUint64), "OutputTokens": float64(1e300),
			"CacheReadInputTokens": math.NaN(), "CacheCreationInputTokens": json.Number("1e30")}},
			model.Usage{InputTokens: math.MaxInt, OutputTokens: math.MaxInt, CacheWriteTokens: math.MaxInt}},
		{"none", []map[string]any{nil, {"other": 1}}, model.Usage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &llms.ContentResponse{}
			for _, info := range tt.info {
				resp.Choices = append(resp.Choices, &llms.ContentChoice{GenerationInfo: info})
			}
			if diff := cmp.Diff(tt.want, Usage(resp)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
