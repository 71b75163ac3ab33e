package agent_test

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
)

// Call takes any model.Model: here a scripted model directly, without a
// Client. The request carries T's schema as its response format, which a
// provider adapter turns into the provider's JSON mode.
func ExampleCall_model() {
	m := llmtest.New(llmtest.Text(`{"action": "ANSWER", "reasoning": "simple arithmetic", "response": "4"}`))
	res, err := agent.Call[Decision](context.Background(), m, "What is 2+2?")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Value.Action, res.Value.Response)
	fmt.Println("JSON requested:", m.Calls()[0].Request.ResponseFormat != nil)
	// Output:
	// ANSWER 4
	// JSON requested: true
}

// A *Client is a model.Model: its aliases, registry and resilience policy
// serve code written against the model vocabulary.
func ExampleClient_Stream() {
	client, err := agent.New(agent.Config{Model: llmtest.New(llmtest.Reply{Thinking: "Greet back.", Text: "Hello!"})})
	if err != nil {
		panic(err)
	}
	var m model.Model = client
	req := &model.Request{Model: "sonnet", Messages: []model.Message{model.User("Hi")}}
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			panic(err)
		}
		switch c.Kind {
		case model.ChunkThinking:
			fmt.Printf("thinking %q\n", c.Text)
		case model.ChunkText:
			fmt.Printf("text %q\n", c.Text)
		case model.ChunkDone:
			fmt.Println("done:", c.Response.Text())
		}
	}
	// Output:
	// thinking "Gree"
	// thinking "t ba"
	// thinking "ck."
	// text "Hell"
	// text "o!"
	// done: Hello!
}
