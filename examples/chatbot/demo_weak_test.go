package chatbot_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// weakSpotCases are the demo's former weak spots, by kind, several
// phrasings each: a chart of figures the conversation already holds (or a
// question back when there are none), "than" that compares with a party
// versus one that compares quantities, and a lookup whose best passage is
// the one about what was asked.
var weakSpotCases = []demoCase{
	{kind: "chart-conversation", before: []string{"How much do the Starter and Team plans cost?"}, say: "Can you chart those prices?", tools: []string{"chart"}},
	{kind: "chart-conversation", before: []string{"Starter is $19, Team is $49 and Business is $89 per editor."}, say: "Plot that for me", tools: []string{"chart"}},
	{kind: "chart-ask", say: "Make a chart for me", actions: []string{"clarify"}, clarify: true, want: []string{"Which numbers"}},
	{kind: "chart-ask", say: "Please plot it", actions: []string{"clarify"}, clarify: true},
	{kind: "chart-not", say: "What is a graph database?", actions: []string{"answer"}, noTools: true},

	{kind: "than-party", say: "Are we cheaper than Northwind?", actions: []string{"workflow"}},
	{kind: "than-party", say: "Is Fabrikam's support faster than ours?", actions: []string{"workflow"}},

	{kind: "lookup-passage", say: "How much does the Team plan cost?", want: []string{`"Team costs $49`}},
	{kind: "lookup-passage", say: "What does the Business plan cost per editor?", want: []string{`"Business costs $89`}},
	{kind: "lookup-passage", say: "What's the price of the Starter plan?", want: []string{`"Starter costs $19`}},
}

// TestDemoWeakSpots runs weakSpotCases; every case must pass. A "than"
// that compares quantities ("more than $50") is a question to look up,
// not a comparison workflow.
func TestDemoWeakSpots(t *testing.T) {
	runDemoCases(t, weakSpotCases, true)
	_, srv := newServer(t, chatbot.Config{})
	for i, say := range []string{"Does Northwind charge more than $50 per user?", "Can Contoso handle more than 100 dashboards?",
		"Is Globex's Pro plan more than 60 dollars a month?"} {
		tr := chat(t, srv, fmt.Sprintf("than-%d", i), say)
		if slices.Contains(tr.decisions(), "workflow") {
			t.Errorf("%q: decisions %v, want no comparison workflow", say, tr.decisions())
		}
	}
}
