package swarm_test

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/examples/swarm"
)

// The supervisor routes the price question to the knowledge agent and,
// once the price is known, the calculation to the calculator agent.
func ExampleSwarm_Run() {
	s, err := swarm.New(swarm.Config{}) // offline model, bundled MCP servers
	if err != nil {
		panic(err)
	}
	defer s.Close(context.Background())

	task := "Find what Acme's Team plan costs per editor, then calculate the yearly cost for 10 editors"
	for ev, err := range s.Run(context.Background(), task) {
		if err != nil {
			panic(err)
		}
		switch ev.Kind {
		case swarm.EventPlan:
			fmt.Println("supervisor ->", ev.Agents)
		case swarm.EventReview:
			fmt.Println(ev.Agent, ev.Review.Verdict)
		case swarm.EventDone:
			fmt.Println(ev.Outcome.Status)
			fmt.Println(ev.Outcome.Answer)
		}
	}
	// Output:
	// supervisor -> [mcp_agent_knowledge]
	// mcp_agent_knowledge FIXED
	// supervisor -> [mcp_agent_calculator]
	// mcp_agent_calculator APPROVED
	// supervisor -> []
	// complete
	// - Find what Acme's Team plan costs per editor: Team costs $49 per editor per month with no editor limit. (pricing § Team) Acme Forecast is a $15 per editor add-on. (pricing § Team)
	// - calculate 49 * 12 * 10: 49 * 12 * 10 = 5880
	//
	// Sources:
	// [1] pricing (Team), used by step_1
	// [2] calculator.calculate (49 * 12 * 10), used by step_2
}
