package bosai_test

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/examples/bosai"
)

// A request that needs two agents: the SQL agent for the count and the
// sandbox for the arithmetic. They run in parallel; the composer
// answers from both.
func ExampleBot_Ask() {
	bot, err := bosai.New(bosai.Config{Offline: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer bot.Close(context.Background())

	resp, err := bot.Ask(context.Background(), bosai.Request{Question: "How many customers are there per country, and what is 12 * 49?", Trace: true})
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
	// plan: [sql computation]
	// sql: succeeded
	// computation: succeeded
	// table rows: 7
	// computes 12 * 49: result = 588
	// trace events: 15
}
