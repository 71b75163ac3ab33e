package chatbot_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// unheldCases ask the demo what its documents do not hold, in words they
// share with passages about something else (the founding year for who
// founded the company, the plans' prices for its stock price, our staff
// for a competitor's), and facts in everyday words the documents do not
// use ("compensation" for a service credit, "bank cards" for credit
// cards, "graphs" for charts). want none means the one right answer
// is to decline.
var unheldCases = []heldOutAnswerCase{
	{say: "Who founded Acme?"},
	{say: "What is Acme's stock price?"},
	{say: "How big is Globex's staff?"},
	{say: "How much does Acme's hardware appliance cost?"},
	{say: "Who is the head of support?"},
	{say: "What is Acme's market share?"},
	{say: "Can I get a refund if I cancel my subscription?"},
	{say: "What compensation do I get if the service is down too much?", want: []string{"10%"}},
	{say: "Do you accept bank cards?", want: []string{"Credit cards"}},
	{say: "How many kinds of graphs does Insights offer?", want: []string{"40"}},
	{say: "Once I shut down my workspace, when is everything erased?", want: []string{"30 days"}},
	{say: "How many calls a minute may a Team workspace make to the programmatic interface?", want: []string{"60"}},
}

// TestDemoUnheld checks each of unheldCases through the chat API: a
// fact is answered with it, and what the documents do not hold is
// declined rather than answered with passages that share its words.
func TestDemoUnheld(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	for i, c := range unheldCases {
		ans := chat(t, srv, fmt.Sprintf("unheld-%d", i), c.say).answer()
		quoted := strings.Contains(ans, "Here is what I found") || strings.Contains(ans, "(search_knowledge:")
		switch {
		case len(c.want) == 0 && quoted:
			t.Errorf("%q: the documents do not say, answered\n%s", c.say, ans)
		case len(c.want) > 0 && !containsAnyFold(ans, c.want):
			t.Errorf("%q: want one of %q, answered\n%s", c.say, c.want, ans)
		}
	}
}
