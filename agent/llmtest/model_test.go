package llmtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/google/go-cmp/cmp"
)

func userRequest(prompt string) *model.Request {
	return &model.Request{Model: "scripted", Messages: []model.Message{model.System("be brief"), model.User(prompt)}}
}

func TestModelGenerateToolCalls(t *testing.T) {
	usage := model.Usage{InputTokens: 7, OutputTokens: 3}
	m := llmtest.New(llmtest.Reply{Thinking: "two cities", Usage: usage, ToolCalls: []model.ToolCall{
		llmtest.ToolCall("call_1", "get_weather", map[string]string{"city": "Paris"}),
		llmtest.ToolCall("call_2", "get_weather", `{"city":"Rome"}`),
	}}, llmtest.Text("Sunny in both."))
	resp, err := m.Generate(context.Background(), userRequest("weather in Paris and Rome?"))
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Response{
		Message: model.Message{Role: model.RoleAssistant, Parts: []model.Part{
			model.ThinkingPart("two cities", llmtest.Signature),
			model.ToolCallPart(model.ToolCall{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}),
			model.ToolCallPart(model.ToolCall{ID: "call_2", Name: "get_weather", Arguments: []byte(`{"city":"Rome"}`)}),
		}},
		FinishReason: model.FinishToolCalls, Usage: usage, Model: "scripted",
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	resp, err = m.Generate(context.Background(), userRequest("and now?"))
	if err != nil || resp.Text() != "Sunny in both." || resp.FinishReason != model.FinishStop {
		t.Errorf("second reply = %+v, %v", resp, err)
	}
	calls := m.Calls()
	if len(calls) != 2 || calls[0].Request == nil || calls[0].System != "be brief" || calls[0].Prompt != "weather in Paris and Rome?" {
		t.Fatalf("calls = %+v", calls)
	}
	if calls[0].Request.Model != "scripted" || len(calls[0].Request.Messages) != 2 {
		t.Errorf("recorded request: model %q, %d messages", calls[0].Request.Model, len(calls[0].Request.Messages))
	}
}

func TestModelStreamKindsApart(t *testing.T) {
	m := llmtest.New(llmtest.Reply{Thinking: "hmm..", Text: "Hi there", Usage: model.Usage{OutputTokens: 2},
		ToolCalls: []model.ToolCall{llmtest.ToolCall("c1", "f", `{"a":1}`)}}).SetChunkSize(4)
	var got []model.Chunk
	for c, err := range m.Stream(context.Background(), userRequest("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	if len(got) == 0 || got[len(got)-1].Kind != model.ChunkDone {
		t.Fatalf("stream = %+v, want a final done chunk", got)
	}
	done := got[len(got)-1].Response
	got[len(got)-1].Response = nil
	want := []model.Chunk{
		{Kind: model.ChunkThinking, Text: "hmm."},
		{Kind: model.ChunkThinking, Text: "."},
		{Kind: model.ChunkText, Text: "Hi t"},
		{Kind: model.ChunkText, Text: "here"},
		{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: 0, ID: "c1", Name: "f", Arguments: `{"a"`}},
		{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `:1}`}},
		{Kind: model.ChunkDone},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if done.Text() != "Hi there" || done.Message.Thinking() != "hmm.." || len(done.ToolCalls()) != 1 || done.Usage.OutputTokens != 2 {
		t.Errorf("final response = %+v", done)
	}
}

func TestModelInjectedErrorsAndCancel(t *testing.T) {
	boom := errors.New("boom")
	m := llmtest.New(llmtest.Fail(boom), llmtest.Hang())
	if _, err := m.Generate(context.Background(), userRequest("x")); !errors.Is(err, boom) {
		t.Errorf("Generate err = %v, want boom", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := model.Collect(m.Stream(ctx, userRequest("y")))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Stream of a hanging reply with a cancelled context: err = %v", err)
	}
	// Breaking out of a stream early is fine.
	m.Add(llmtest.Text("a long answer"))
	for range m.Stream(context.Background(), userRequest("z")) {
		break
	}
}

func BenchmarkModelGenerate(b *testing.B) {
	m := llmtest.New().Default(llmtest.Reply{Text: "ok", ToolCalls: []model.ToolCall{llmtest.ToolCall("c", "f", `{}`)}}).KeepCalls(0)
	req := userRequest("hi")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Generate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkModelStream(b *testing.B) {
	m := llmtest.New().Default(llmtest.Reply{Text: "a short answer", ToolCalls: []model.ToolCall{llmtest.ToolCall("c", "f", `{"a":1}`)}}).KeepCalls(0).SetChunkSize(8)
	req := userRequest("hi")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range m.Stream(ctx, req) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestFromAndWait: a script answers the prompts its rules match and hands
// the rest to another model (From), through Generate and Stream alike; a
// reply with Wait answers once the test closes the channel.
func TestFromAndWait(t *testing.T) {
	inner := llmtest.New().Default(llmtest.Text("from the inner model"))
	release := make(chan struct{})
	m := llmtest.New().Default(llmtest.From(inner)).
		On("scripted", llmtest.Text("scripted answer")).
		On("held", llmtest.Reply{Wait: release, Model: inner})
	ctx := context.Background()
	if resp, err := m.Generate(ctx, userRequest("scripted?")); err != nil || resp.Text() != "scripted answer" {
		t.Errorf("rule = %+v, %v", resp, err)
	}
	if resp, err := model.Collect(m.Stream(ctx, userRequest("anything else"))); err != nil || resp.Text() != "from the inner model" {
		t.Errorf("handed over (stream) = %+v, %v", resp, err)
	}
	done := make(chan string, 1)
	go func() {
		resp, err := m.Generate(ctx, userRequest("held"))
		if err != nil {
			done <- err.Error()
			return
		}
		done <- resp.Text()
	}()
	// Once the held call has its reply (the model records the call when it
	// picks it), it waits for the release: it must not answer meanwhile.
	for deadline := time.Now().Add(10 * time.Second); len(m.Calls()) < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the held call never reached the model")
		}
	}
	select {
	case got := <-done:
		t.Fatalf("a held call answered %q before its release", got)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if got := <-done; got != "from the inner model" {
		t.Errorf("released call = %q", got)
	}
	if n := len(inner.Calls()); n != 2 {
		t.Errorf("the inner model got %d calls, want 2", n)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := llmtest.New(llmtest.Reply{Wait: make(chan struct{})}).Generate(cctx, userRequest("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("a held call whose context ends = %v", err)
	}
}
