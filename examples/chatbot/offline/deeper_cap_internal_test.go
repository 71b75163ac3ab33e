package offline

import (
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/knowledge"
)

// TestDeeperSearchLeavesRoomForUntried checks that the deeper search for
// a count asks for the most passages the knowledge tool returns, and is
// made only when the iterations left after it still try every search
// tool not yet called: with one call left, the untried web search comes
// first.
func TestDeeperSearchLeavesRoomForUntried(t *testing.T) {
	if deepTopK != knowledge.MaxTopK {
		t.Fatalf("deepTopK = %d, want knowledge.MaxTopK %d", deepTopK, knowledge.MaxTopK)
	}
	rs := []result{{source: "search_knowledge", text: `2 passages for "partners", best first:

[1] integrations § Partner program (score 2.00)
Partners resell the platform and get a discount on every seat they sell.

[2] support-policy § Escalation (score 1.00)
Partners escalate a customer's ticket through the partner portal.
`}}
	q := "How many partners do you have?"
	both := []tool{{name: "search_knowledge"}, {name: "web_search"}}
	for _, c := range []struct {
		tools          []tool
		iteration, max int
		want           string
		deep           bool
	}{
		{both, 2, 5, "search_knowledge", true},
		{both, 3, 4, "web_search", false},
		{[]tool{{name: "search_knowledge"}}, 3, 4, "search_knowledge", true},
	} {
		p := prompt{kind: kindSupervisor, question: q, tools: c.tools, results: rs, iteration: c.iteration, max: c.max}
		d := decideWithResults(p, q, false)
		if d.Tool != c.want || (d.Arguments["top_k"] == deepTopK) != c.deep {
			t.Errorf("iteration %d of %d, %d tools: decision = %+v, want %s (deeper %v)", c.iteration, c.max, len(c.tools), d, c.want, c.deep)
		}
	}
}
