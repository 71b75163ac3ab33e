package llmtest_test

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
)

// A scripted model.Model answers in process: here a turn with two parallel
// tool calls, then the answer, streamed with its kinds apart.
func ExampleModel_Stream() {
	m := llmtest.New(
		llmtest.Reply{Thinking: "Two cities.", ToolCalls: []model.ToolCall{
			llmtest.ToolCall("call_1", "get_weather", map[string]string{"city": "Paris"}),
			llmtest.ToolCall("call_2", "get_weather", map[string]string{"city": "Rome"}),
		}, Usage: model.Usage{InputTokens: 12, OutputTokens: 8}},
		llmtest.Text("Sunny in both."),
	).SetChunkSize(100)
	req := &model.Request{Messages: []model.Message{model.User("Weather in Paris and Rome?")}}
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			panic(err)
		}
		switch c.Kind {
		case model.ChunkThinking:
			fmt.Println("thinking:", c.Text)
		case model.ChunkToolCall:
			fmt.Println("tool call", c.ToolCall.Index, c.ToolCall.Name, c.ToolCall.Arguments)
		case model.ChunkDone:
			fmt.Println("finish:", c.Response.FinishReason, "tokens:", c.Response.Usage.Total())
		}
	}
	resp, _ := m.Generate(context.Background(), req)
	fmt.Println(resp.Text())
	// Output:
	// thinking: Two cities.
	// tool call 0 get_weather {"city":"Paris"}
	// tool call 1 get_weather {"city":"Rome"}
	// finish: tool_calls tokens: 20
	// Sunny in both.
}
