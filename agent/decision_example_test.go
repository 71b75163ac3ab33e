package agent_test

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
)

func ExampleDecide() {
	// The scripted model first names a tool that does not exist; Decide
	// feeds the error back and the second reply is accepted.
	model := llmtest.New(
		llmtest.Text(`{"action":"CALL_TOOL","reasoning":"needs prices","tool":"pricing_db","arguments":{"query":"Team plan"}}`),
		llmtest.Text(`{"action":"CALL_TOOL","reasoning":"needs prices","tool":"search_knowledge","arguments":{"query":"Team plan price"}}`),
	)
	client, err := agent.New(agent.Config{Model: model})
	if err != nil {
		panic(err)
	}
	d, _, err := agent.Decide(context.Background(), client, agent.SupervisorInput{
		Query: "How much is the Team plan?",
		Tools: []agent.ToolSummary{
			{Name: "search_knowledge", Description: "Search the company knowledge base. Arguments: query."},
			{Name: "web_search", Description: "Search the web. Arguments: query."},
		},
		Iteration: 1, MaxIterations: 5,
	}, agent.WithModel("sonnet"))
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Action.Route(), d.Tool, d.Arguments["query"])
	// Output:
	// call_tool search_knowledge Team plan price
}

func ExampleDecide_fallback() {
	// A model that never answers in the schema: the turn goes on with a
	// clarifying question.
	model := llmtest.New().Default(llmtest.Text("Sure, I can help with that!"))
	client, err := agent.New(agent.Config{Model: model})
	if err != nil {
		panic(err)
	}
	d, _, err := agent.Decide(context.Background(), client, agent.SupervisorInput{Query: "update it"})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Action, d.Fallback, d.Question)
	// Output:
	// CLARIFY true Could you please rephrase your request?
}

func ExampleReflect() {
	model := llmtest.New(llmtest.Text(`{"assessment":"need_more","reasoning":"only our prices are known","missing":"competitor prices"}`))
	client, err := agent.New(agent.Config{Model: model})
	if err != nil {
		panic(err)
	}
	r, _, err := agent.Reflect(context.Background(), client, agent.ReflectInput{
		Query:        "Compare our pricing to competitors",
		Observations: []agent.Observation{{Source: "search_knowledge", Content: "Team: $49 per seat per month."}},
		Iteration:    1, MaxIterations: 5,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Assessment, "-", r.Missing)
	// Output:
	// need_more - competitor prices
}
