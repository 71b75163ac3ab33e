package lcmodel

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/google/go-cmp/cmp"
	"github.com/tmc/langchaingo/llms"
)

func TestSplitterKeepsKindsApart(t *testing.T) {
	var got []model.Chunk
	s := NewSplitter(func(c model.Chunk) error { got = append(got, c); return nil })
	var o llms.CallOptions
	for _, f := range s.Options() {
		f(&o)
	}
	ctx := context.Background()
	// As langchaingo's OpenAI client calls them: text, then the JSON of
	// tool-call deltas in place of text, reasoning through the second func.
	for _, b := range []string{
		"Let me ",
		`[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]`,
		`[{"type":"","function":{"name":"","arguments":"{\"city\""}}]`,
		`[{"type":"","function":{"name":"","arguments":":\"Paris\"}"}}]`,
		`[{"id":"call_2","type":"function","function":{"name":"clock","arguments":"{}"}}]`,
		`[{"a":1}]`, // JSON text that is not a delta stays text
		"",
	} {
		if err := o.StreamingFunc(ctx, []byte(b)); err != nil {
			t.Fatal(err)
		}
		if err := o.StreamingReasoningFunc(ctx, nil, []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.StreamingReasoningFunc(ctx, []byte("hmm"), nil); err != nil {
		t.Fatal(err)
	}
	want := []model.Chunk{
		{Kind: model.ChunkText, Text: "Let me "},
		{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: 0, ID: "call_1", Name: "get_weather"}},
		{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `{"city"`}},
		{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `:"Paris"}`}},
		{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: 1, ID: "call_2", Name: "clock", Arguments: "{}"}},
		{Kind: model.ChunkText, Text: `[{"a":1}]`},
		{Kind: model.ChunkThinking, Text: "hmm"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	// Tool calls were streamed, so Finish adds none.
	n := len(got)
	if err := s.Finish([]model.ToolCall{{ID: "call_1"}}); err != nil || len(got) != n {
		t.Errorf("Finish after streamed calls emitted %d chunks, err %v", len(got)-n, err)
	}
	s.Reset()
	if s.Emitted() {
		t.Error("Emitted after Reset")
	}
	if err := s.Finish([]model.ToolCall{{ID: "x", Name: "f", Arguments: json.RawMessage(`{}`)}}); err != nil || len(got) != n+1 ||
		got[n].ToolCall.ID != "x" || got[n].ToolCall.Arguments != "{}" {
		t.Errorf("Finish without streamed calls: %+v, %v", got[n:], err)
	}
}

func TestSplitterStopsOnEmitError(t *testing.T) {
	stop := errors.New("stop")
	s := NewSplitter(func(model.Chunk) error { return stop })
	var o llms.CallOptions
	for _, f := range s.Options() {
		f(&o)
	}
	if err := o.StreamingFunc(context.Background(), []byte("x")); !errors.Is(err, stop) {
		t.Errorf("err = %v", err)
	}
}

func TestMessagesPerDialect(t *testing.T) {
	conv := []model.Message{
		model.System("sys"),
		{Role: model.RoleUser, Parts: []model.Part{model.TextPart("look"), model.BinaryPart("image/png", []byte{1, 2})}},
		{Role: model.RoleAssistant, Parts: []model.Part{model.ThinkingPart("hm", "sig"), model.TextPart("Checking."),
			model.ToolCallPart(model.ToolCall{ID: "a", Name: "f", Arguments: json.RawMessage(`{"x":1}`)}),
			model.ToolCallPart(model.ToolCall{ID: "b", Name: "g"})}},
		model.ToolResults(model.ToolResult{CallID: "a", Name: "f", Content: []model.Part{model.TextPart("one")}},
			model.ToolResult{CallID: "b", Name: "g", Structured: json.RawMessage(`{"ok":false}`), IsError: true}),
	}
	openai, err := Messages(conv, OpenAI)
	if err != nil {
		t.Fatal(err)
	}
	want := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "sys"),
		{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.TextContent{Text: "look"}, llms.BinaryContent{MIMEType: "image/png", Data: []byte{1, 2}}}},
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.TextContent{Text: "Checking."},
			llms.ToolCall{ID: "a", Type: "function", FunctionCall: &llms.FunctionCall{Name: "f", Arguments: `{"x":1}`}},
			llms.ToolCall{ID: "b", Type: "function", FunctionCall: &llms.FunctionCall{Name: "g", Arguments: `{}`}}}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "a", Name: "f", Content: "one"}}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "b", Name: "g", Content: `error: {"ok":false}`}}},
	}
	if diff := cmp.Diff(want, openai); diff != "" {
		t.Errorf("OpenAI messages (-want +got):\n%s", diff)
	}
	anthropic, err := Messages(conv, Anthropic)
	if err != nil {
		t.Fatal(err)
	}
	// One assistant message per block: text, call a, call b.
	if len(anthropic) != 7 || anthropic[2].Role != llms.ChatMessageTypeAI || anthropic[4].Role != llms.ChatMessageTypeAI ||
		len(anthropic[3].Parts) != 1 {
		t.Errorf("Anthropic messages = %+v", anthropic)
	}
	if _, err := Messages([]model.Message{{Role: model.RoleUser, Parts: []model.Part{{Kind: model.PartBinary, URL: "https://x/y.png"}}}}, Anthropic); err == nil {
		t.Error("an image by URL for Anthropic: no error")
	}
	if _, err := Messages([]model.Message{{Role: "robot"}}, Generic); err == nil {
		t.Error("unknown role: no error")
	}
}

func TestResponseAnthropicBlocks(t *testing.T) {
	info := map[string]any{"InputTokens": 10, "OutputTokens": 20, "CacheReadInputTokens": 5, "CacheCreationInputTokens": 0}
	withInfo := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range info {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	raw := &llms.ContentResponse{Choices: []*llms.ContentChoice{
		{StopReason: "tool_use", GenerationInfo: withInfo(map[string]any{"ThinkingContent": "hm", "ThinkingSignature": "sig"})},
		{Content: "Checking.", StopReason: "tool_use", GenerationInfo: withInfo(map[string]any{"ThinkingContent": "", "OutputContent": "Checking."})},
		{StopReason: "tool_use", ToolCalls: []llms.ToolCall{{ID: "t1", FunctionCall: &llms.FunctionCall{Name: "f", Arguments: `{"a":1}`}}}, GenerationInfo: withInfo(nil)},
	}}
	resp, err := Response(raw, Anthropic, "claude-x")
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Response{
		Message: model.Message{Role: model.RoleAssistant, Parts: []model.Part{model.ThinkingPart("hm", "sig"), model.TextPart("Checking."),
			model.ToolCallPart(model.ToolCall{ID: "t1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)})}},
		FinishReason: model.FinishToolCalls, Usage: model.Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 5}, Model: "claude-x",
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := Response(&llms.ContentResponse{}, OpenAI, "m"); !errors.Is(err, ErrEmptyResponse) {
		t.Errorf("empty response: err = %v", err)
	}
}

func TestOptions(t *testing.T) {
	temp := 0.5
	req := &model.Request{Temperature: &temp, MaxTokens: 100, Stop: []string{"X"}, ResponseFormat: &model.ResponseFormat{},
		Tools: []model.ToolDef{{Name: "f"}}, ToolChoice: model.ToolChoice{Mode: model.ToolRequired}, Thinking: &model.Thinking{Budget: 2000}}
	apply := func(d Dialect) llms.CallOptions {
		var o llms.CallOptions
		for _, f := range Options(req, d, "id") {
			f(&o)
		}
		return o
	}
	a := apply(Anthropic)
	if a.Model != "id" || a.MaxTokens != 2100 || a.Temperature != 1 || !a.JSONMode || a.ToolChoice != "required" ||
		len(a.Tools) != 1 || string(a.Tools[0].Function.Parameters.(json.RawMessage)) != string(emptyObjectSchema) {
		t.Errorf("Anthropic options = %+v", a)
	}
	o := apply(OpenAI)
	if o.Temperature != 0.5 || !cmp.Equal(o.StopWords, []string{"X"}) {
		t.Errorf("OpenAI options = %+v", o)
	}
	for stop, want := range map[string]model.FinishReason{"end_turn": model.FinishStop, "max_tokens": model.FinishLength,
		"length": model.FinishLength, "tool_use": model.FinishToolCalls, "content_filter": model.FinishContentFilter, "": model.FinishStop} {
		if got := Finish(stop, false); got != want {
			t.Errorf("Finish(%q) = %s, want %s", stop, got, want)
		}
	}
}

func TestUsage(t *testing.T) {
	raw := &llms.ContentResponse{Choices: []*llms.ContentChoice{{GenerationInfo: map[string]any{
		"PromptTokens": 100, "CompletionTokens": 50, "ReasoningTokens": 20, "PromptCachedTokens": 30}}}}
	if got, want := Usage(raw), (model.Usage{InputTokens: 70, OutputTokens: 30, ThinkingTokens: 20, CacheReadTokens: 30}); got != want {
		t.Errorf("OpenAI usage = %+v, want %+v", got, want)
	}
	raw.Choices[0].GenerationInfo = map[string]any{UsageKey: model.Usage{InputTokens: 1}}
	if got := Usage(raw); got.InputTokens != 1 {
		t.Errorf("UsageKey usage = %+v", got)
	}
}

// A tool result's binary parts are described, not dropped: langchaingo's
// tool responses are text, and an image-only result is not empty.
func TestResultTextDescribesBinary(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n....")
	for _, tc := range []struct {
		name string
		r    model.ToolResult
		want string
	}{
		{"image only", model.ToolResult{Content: []model.Part{model.BinaryPart("image/png", png)}}, "[image/png, 12 bytes, not shown]"},
		{"text around", model.ToolResult{Content: []model.Part{model.TextPart("before"), model.BinaryPart("image/png", png), model.TextPart("after")}},
			"before\n[image/png, 12 bytes, not shown]\nafter"},
		{"url", model.ToolResult{Content: []model.Part{{Kind: model.PartBinary, MIMEType: "image/jpeg", URL: "https://x/y.jpg"}}}, "[image/jpeg at https://x/y.jpg, not shown]"},
		{"failed", model.ToolResult{IsError: true, Content: []model.Part{model.BinaryPart("", png)}}, "error: [application/octet-stream, 12 bytes, not shown]"},
		{"text", model.ToolResult{Content: []model.Part{model.TextPart("a"), model.TextPart("b")}}, "ab"},
	} {
		if got := ResultText(tc.r); got != tc.want {
			t.Errorf("%s: ResultText = %q, want %q", tc.name, got, tc.want)
		}
	}
}
