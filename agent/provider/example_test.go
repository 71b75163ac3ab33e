package provider_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
)

// A native tool round trip with an OpenAI model, here against llmtest's
// OpenAI server; set BaseURL to any OpenAI-compatible server, or leave it
// empty for OpenAI itself.
func ExampleOpenAI() {
	script := llmtest.New(
		llmtest.ToolCalls(llmtest.ToolCall("call_1", "get_weather", `{"city":"Paris"}`)),
		llmtest.Text("It is sunny in Paris."))
	srv := llmtest.NewOpenAIServer(script)
	defer srv.Close()

	m, err := provider.OpenAI(provider.OpenAIConfig{APIKey: "sk-...", BaseURL: srv.URL + "/v1", Model: "gpt-4o"})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	req := &model.Request{
		Messages: []model.Message{model.User("What is the weather in Paris?")},
		Tools: []model.ToolDef{{Name: "get_weather", Description: "The weather of a city.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}},
	}
	resp, err := m.Generate(ctx, req)
	if err != nil {
		panic(err)
	}
	call := resp.ToolCalls()[0]
	fmt.Println("call:", call.Name, string(call.Arguments))

	// Run the tool, send its result back, and stream the answer.
	req.Messages = append(req.Messages, resp.Message, model.ToolResults(model.ToolResult{
		CallID: call.ID, Name: call.Name, Content: []model.Part{model.TextPart("sunny, 24°C")}}))
	for chunk, err := range m.Stream(ctx, req) {
		if err != nil {
			panic(err)
		}
		switch chunk.Kind {
		case model.ChunkText:
			fmt.Print(chunk.Text)
		case model.ChunkDone:
			fmt.Println("\nfinish:", chunk.Response.FinishReason)
		}
	}
	// Output:
	// call: get_weather {"city":"Paris"}
	// It is sunny in Paris.
	// finish: stop
}
