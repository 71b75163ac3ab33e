package supervisor_test

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/supervisor"
)

func ExampleCritique() {
	// A self-correction loop: the reviewer rejects the first attempt with
	// feedback, and approves the second.
	m := llmtest.New(
		llmtest.Text(`{"verdict":"REJECTED","critique":"the calculator does not read words","feedback":"write 15% of 240 as 15/100*240"}`),
		llmtest.Text(`{"verdict":"APPROVED","critique":"the calculator evaluated the expression"}`),
	)
	task := "Calculate 15% of 240"
	attempts := []supervisor.CritiqueInput{
		{Call: `calculate {"expression":"15% of 240"}`, Error: `unexpected token "of"`},
		{Call: `calculate {"expression":"15/100*240"}`, Output: "36"},
	}
	for i, in := range attempts {
		in.Task, in.Attempt, in.MaxAttempts = task, i+1, len(attempts)
		res, err := supervisor.Critique(context.Background(), m, in)
		if err != nil {
			panic(err)
		}
		r := res.Value
		fmt.Println(r.Verdict, "-", r.Feedback)
		if r.Verdict != supervisor.VerdictRejected {
			break
		}
	}
	// Output:
	// REJECTED - write 15% of 240 as 15/100*240
	// APPROVED -
}

func ExampleFallbackReview() {
	// The verdict Critique gives when the model never answers in the
	// schema: judged by the step's status alone.
	r := supervisor.FallbackReview(supervisor.CritiqueInput{Task: "Find the price", Error: "knowledge server is down"})
	fmt.Println(r.Verdict, "-", r.Feedback)
	// Output:
	// REJECTED - The step failed: knowledge server is down
}
