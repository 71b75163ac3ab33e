package agent_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
)

// Decision is what a supervisor decides to do next.
type Decision struct {
	Action    string `json:"action" jsonschema:"enum=ANSWER,enum=CALL_TOOL,enum=CLARIFY"`
	Reasoning string `json:"reasoning"`
	Operator  string `json:"operator,omitempty" jsonschema:"description=The operator to call, for CALL_TOOL"`
	Response  string `json:"response,omitempty"`
}

// Validate says what the schema cannot: CALL_TOOL needs an operator.
func (d Decision) Validate() error {
	if d.Action == "CALL_TOOL" && d.Operator == "" {
		return &agent.FieldError{Field: "operator", Message: "operator is required when action is CALL_TOOL"}
	}
	return nil
}

func ExampleCall() {
	// A scripted model stands in for a provider: its first reply breaks the
	// Validate rule, the second is valid.
	model := llmtest.New(
		llmtest.Text(`{"action": "CALL_TOOL", "reasoning": "needs fresh data"}`),
		llmtest.Text("```json\n{\"action\": \"CALL_TOOL\", \"reasoning\": \"needs fresh data\", \"operator\": \"web_search\"}\n```"),
	)
	client, err := agent.New(agent.Config{Model: model})
	if err != nil {
		panic(err)
	}

	res, err := agent.Call[Decision](context.Background(), client, "What is the weather in Oslo?",
		agent.WithSystem("You are a supervisor."), agent.WithModel("sonnet"))
	var failed *agent.StructuredOutputError
	if errors.As(err, &failed) {
		fmt.Println("gave up:", failed.Attempts)
		return
	}
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Value.Action, res.Value.Operator)
	for _, a := range res.Attempts {
		fmt.Printf("attempt %d rejected (%s): %s\n", a.Number, a.Kind, a.Message)
	}
	// Output:
	// CALL_TOOL web_search
	// attempt 1 rejected (schema_validation): - Field 'operator': operator is required when action is CALL_TOOL
}

func ExampleRegistry() {
	reg := agent.DefaultRegistry()

	// Point a built-in alias at another provider, and add a name of your own.
	if err := agent.RegisterAliases(reg, "haiku=openai:gpt-4o-mini"); err != nil {
		panic(err)
	}
	if err := reg.Register(agent.ModelSpec{
		Name: "local", Provider: agent.ProviderOllama, ID: "llama3.2",
		Capabilities: agent.Capabilities{JSONMode: true},
	}); err != nil {
		panic(err)
	}

	for _, name := range []string{"haiku", "sonnet", "thinking", "local", "openai:gpt-4o"} {
		s, _ := reg.Lookup(name)
		fmt.Printf("%-14s %-9s %-25s thinking=%v\n", name, s.Provider, s.ID, s.ThinkByDefault)
	}
	// Output:
	// haiku          openai    gpt-4o-mini               thinking=false
	// sonnet         anthropic claude-sonnet-4-20250514  thinking=false
	// thinking       anthropic claude-sonnet-4-20250514  thinking=true
	// local          ollama    llama3.2                  thinking=false
	// openai:gpt-4o  openai    gpt-4o                    thinking=false
}

func ExampleComplete() {
	llm := llmtest.New(llmtest.Reply{
		Thinking: "Two plus two.",
		Text:     "It is 4.",
		Chunks:   []string{"It is", " 4."},
		Usage:    model.Usage{InputTokens: 12, OutputTokens: 4, ThinkingTokens: 6},
	})
	client, err := agent.New(agent.Config{Model: llm})
	if err != nil {
		panic(err)
	}
	resp, err := agent.Complete(context.Background(), client, "What is 2+2?",
		agent.WithModel("thinking"),
		agent.WithStreaming(func(_ context.Context, c model.Chunk) error {
			if c.Kind == model.ChunkText {
				fmt.Printf("chunk %q\n", c.Text)
			}
			return nil
		}))
	if err != nil {
		panic(err)
	}
	fmt.Println("answer:", resp.Text)
	fmt.Println("thinking:", resp.Thinking)
	fmt.Println("tokens:", resp.Usage.Total())
	// Output:
	// chunk "It is"
	// chunk " 4."
	// answer: It is 4.
	// thinking: Two plus two.
	// tokens: 22
}
