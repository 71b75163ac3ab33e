package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/google/go-cmp/cmp"
	"github.com/tmc/langchaingo/llms"
)

func TestUsageOf(t *testing.T) {
	tests := []struct {
		name string
		info []map[string]any
		want agent.TokenUsage
	}{
		{"openai with reasoning and cache", []map[string]any{{
			"PromptTokens": 1700, "CompletionTokens": 5800, "TotalTokens": 7500,
			"ReasoningTokens": 5000, "ThinkingTokens": 5000, "PromptCachedTokens": 200}},
			agent.TokenUsage{InputTokens: 1500, OutputTokens: 800, ThinkingTokens: 5000, CacheReadTokens: 200}},
		{"anthropic blocks repeat the usage", []map[string]any{
			{"ThinkingContent": "hmm", "InputTokens": 25, "OutputTokens": 15, "CacheCreationInputTokens": 7, "CacheReadInputTokens": 3},
			{"InputTokens": 25, "OutputTokens": 15, "CacheCreationInputTokens": 7, "CacheReadInputTokens": 3}},
			agent.TokenUsage{InputTokens: 25, OutputTokens: 15, CacheReadTokens: 3, CacheWriteTokens: 7}},
		{"ollama", []map[string]any{{"PromptTokens": 11, "CompletionTokens": 4, "TotalTokens": 15, "ThinkingTokens": 0}},
			agent.TokenUsage{InputTokens: 11, OutputTokens: 4}},
		{"googleai int32", []map[string]any{{"input_tokens": int32(9), "output_tokens": int32(2), "PromptTokens": int32(9),
			"CompletionTokens": int32(2)}}, agent.TokenUsage{InputTokens: 9, OutputTokens: 2}},
		{"bedrock", []map[string]any{{"input_tokens": 8, "output_tokens": 3}}, agent.TokenUsage{InputTokens: 8, OutputTokens: 3}},
		{"exact usage key", []map[string]any{{agent.UsageKey: agent.TokenUsage{InputTokens: 1, CacheWriteTokens: 2}}},
			agent.TokenUsage{InputTokens: 1, CacheWriteTokens: 2}},
		{"none", []map[string]any{nil, {"other": 1}}, agent.TokenUsage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &llms.ContentResponse{}
			for _, info := range tt.info {
				resp.Choices = append(resp.Choices, &llms.ContentChoice{GenerationInfo: info})
			}
			if diff := cmp.Diff(tt.want, agent.UsageOf(resp)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTokenUsageMergeAndJSON(t *testing.T) {
	a := agent.TokenUsage{InputTokens: 1500, OutputTokens: 800, ThinkingTokens: 5000, CacheReadTokens: 200}
	b := agent.TokenUsage{InputTokens: 1, OutputTokens: 2, ThinkingTokens: 3, CacheReadTokens: 4, CacheWriteTokens: 5}
	want := agent.TokenUsage{InputTokens: 1501, OutputTokens: 802, ThinkingTokens: 5003, CacheReadTokens: 204, CacheWriteTokens: 5}
	if diff := cmp.Diff(want, a.Merge(b)); diff != "" {
		t.Errorf("Merge (-want +got):\n%s", diff)
	}
	if a.Merge(agent.TokenUsage{}) != a || !(agent.TokenUsage{}).IsZero() {
		t.Error("the zero usage is not the identity of Merge")
	}
	got, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"input_tokens":1500,"output_tokens":800,"thinking_tokens":5000,"cache_read_tokens":200,"cache_write_tokens":0,"total_tokens":7500}`
	if string(got) != wantJSON {
		t.Errorf("JSON = %s\nwant   %s", got, wantJSON)
	}
	var back agent.TokenUsage
	if err := json.Unmarshal(got, &back); err != nil || back != a {
		t.Errorf("round trip = %+v, %v", back, err)
	}
}
