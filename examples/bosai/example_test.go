package bosai_test

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/examples/bosai"
)

// A request that needs two agents: the knowledge base for the price and
// the sandbox for the arithmetic. They run in parallel; the composer
// answers from both.
func ExampleBot_Ask() {
	bot, err := bosai.New(bosai.Config{Offline: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer bot.Close(context.Background())

	resp, err := bot.Ask(context.Background(), bosai.Request{Question: "What does the Team plan cost per editor, and what is 12 * 49?"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("plan:", resp.Plan.Agents)
	for _, r := range resp.Results {
		fmt.Printf("%s: %s\n", r.Agent, r.Status)
	}
	fmt.Println("table rows:", resp.Data.RowCount)
	fmt.Println(resp.Results[1].Answer)
	fmt.Println("trace events:", len(resp.Trace))
	// Output:
	// plan: [knowledge computation]
	// knowledge: succeeded
	// computation: succeeded
	// table rows: 3
	// computes 12 * 49: result = 588
	// trace events: 10
}
