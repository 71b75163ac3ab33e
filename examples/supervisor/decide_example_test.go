package supervisor_test

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor"
)

func ExampleDecide() {
	// The scripted model first names a tool that does not exist; Decide
	// feeds the error back and the second reply is accepted.
	m := llmtest.New(
		llmtest.Text(`{"action":"CALL_TOOL","reasoning":"needs prices","tool":"pricing_db","arguments":{"query":"Team plan"}}`),
		llmtest.Text(`{"action":"CALL_TOOL","reasoning":"needs prices","tool":"search_knowledge","arguments":{"query":"Team plan price"}}`),
	)
	res, err := supervisor.Decide(context.Background(), m, supervisor.DecideInput{
		Query: "How much is the Team plan?",
		Tools: []model.ToolDef{
			{Name: "search_knowledge", Description: "Search the company knowledge base. Arguments: query."},
			{Name: "web_search", Description: "Search the web. Arguments: query."},
		},
		Iteration: 1, MaxIterations: 5,
	}, agent.WithModel("sonnet"))
	if err != nil {
		panic(err)
	}
	d := res.Value
	fmt.Println(d.Action.Route(), d.Tool, d.Arguments["query"])
	// Output:
	// call_tool search_knowledge Team plan price
}

func ExampleDecide_fallback() {
	// A model that never answers in the schema: the turn goes on with a
	// clarifying question.
	m := llmtest.New().Default(llmtest.Text("Sure, I can help with that!"))
	res, err := supervisor.Decide(context.Background(), m, supervisor.DecideInput{Query: "update it"})
	if err != nil {
		panic(err)
	}
	d := res.Value
	fmt.Println(d.Action, res.Fallback, d.Question)
	// Output:
	// CLARIFY true Could you please rephrase your request?
}

func ExampleReflect() {
	m := llmtest.New(llmtest.Text(`{"assessment":"need_more","reasoning":"only our prices are known","missing":"competitor prices"}`))
	res, err := supervisor.Reflect(context.Background(), m, supervisor.ReflectInput{
		Query:        "Compare our pricing to competitors",
		Observations: []supervisor.Observation{{Source: "search_knowledge", Content: "Team: $49 per seat per month."}},
		Iteration:    1, MaxIterations: 5,
	})
	if err != nil {
		panic(err)
	}
	r := res.Value
	fmt.Println(r.Assessment, "-", r.Missing)
	// Output:
	// need_more - competitor prices
}
