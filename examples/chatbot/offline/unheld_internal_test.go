package offline

import "testing"

// unheldResults are passages a search returns for questions about the
// company's founders, its shares, a competitor's staff and its support
// lead: they share the questions' words ("founded", "price", "staff",
// "head of support") but not what the questions ask.
var unheldResults = []result{{source: "search_knowledge", text: `6 passages for "unheld", best first:

[1] company-overview § Who we are (score 3.00)
Acme Analytics was founded in 2019 in Lisbon and has about 140 employees in Lisbon, Toronto and Singapore. Around 2,300 customers use the platform, most of them companies with 50 to 2,000 employees in retail, logistics and software.

[2] competitor-comparison § Globex BI (score 2.50)
Globex BI targets large enterprises. It sells capacity rather than seats, starting at about $5,000 per month for its smallest capacity unit, with a 12-month minimum term.

[3] competitor-comparison § Northwind Metrics (score 2.00)
Northwind Metrics is our most frequent competitor in retail. Its Pro plan lists at $70 per user per month and charges for every user, including viewers.

[4] pricing (score 1.80)
Acme Analytics has four pricing tiers: Starter, Team, Business and Enterprise. All prices are in US dollars per editor seat per month, billed annually. Monthly billing costs 20% more.

[5] pricing § Team (score 1.50)
Team costs $49 per editor per month with no editor limit.

[6] support-policy § Escalation (score 1.00)
Escalations go to the support lead on duty within two hours and to the head of support after one business day.
`}}

// TestAskedAgentNotHeld checks that a question about who did something
// or who holds a role is not answered by a sentence that says it was
// done without saying by whom, or names the role without naming who
// holds it; and that "who" of a relative clause or of who gets a thing
// asks as before.
func TestAskedAgentNotHeld(t *testing.T) {
	for _, tt := range []struct{ q, want string }{
		{"Who founded Acme?", ""},
		{"Do you know who established Acme Analytics?", ""},
		{"Who is the head of support?", ""},
		{"Who was the founder of Acme?", ""},
		{"When was Acme founded?", "2019"},
		{"Who do escalations go to after two hours?", "support lead"},
	} {
		checkAnswer(t, tt.q, unheldResults, tt.want)
	}
	agent := []result{{source: "search_knowledge", text: `1 passages for "founded", best first:

[1] company-overview § History (score 3.00)
Acme Analytics was founded by Jane Doe and Rui Costa in 2019.
`}}
	checkAnswer(t, "Who founded Acme?", agent, "Jane Doe")
}

// TestAskedOwnerOfSize checks that "how big is X's staff?" asks a count
// of X's staff, which our own headcount does not give.
func TestAskedOwnerOfSize(t *testing.T) {
	checkAnswer(t, "How big is Globex's staff?", unheldResults, "")
	checkAnswer(t, "How big is Acme's staff?", unheldResults, "140")
}

// TestPricedThingNotHeld checks that an amount of money or a percentage
// asked of a thing the results do not hold (a modifier of the word of
// money, "stock price"; the subject of "cost", "hardware appliance") is
// not answered by the plans' prices or a discount, while the same noun
// with a plain adjective ("monthly price") or of a plan is.
func TestPricedThingNotHeld(t *testing.T) {
	for _, tt := range []struct{ q, want string }{
		{"What is Acme's stock price?", ""},
		{"What is Northwind's share price?", ""},
		{"What is Acme's market share?", ""},
		{"How much does Acme's hardware appliance cost?", ""},
		{"What is the monthly price of Team?", "$49"},
		{"How much does the Team plan cost?", "$49"},
		{"What is Northwind's list price per user?", "$70"},
	} {
		checkAnswer(t, tt.q, unheldResults, tt.want)
	}
}

// TestUsageBesideAndPhrases checks the usage table's groups that hold
// their sense only beside a word of their context ("refund" is a
// service credit beside "downtime", not beside "cancel") and its
// phrases ("bank cards" is "credit cards", which one word of a passage
// answers).
func TestUsageBesideAndPhrases(t *testing.T) {
	rs := []result{{source: "search_knowledge", text: `3 passages for "credit", best first:

[1] sla § Service credits (score 3.00)
If monthly uptime falls below the commitment, customers receive a credit of 10% of the monthly fee, rising to 25% below 99.0% and 50% below 95.0%.

[2] sla § Exclusions (score 2.00)
Scheduled maintenance announced at least 5 days in advance, outages of a customer's own data sources, and problems caused by exceeding API limits do not count as downtime.

[3] faq § What payment methods are accepted? (score 1.00)
Credit cards on all plans, and invoices with 30-day payment terms on annual contracts above $10,000.
`}}
	for _, tt := range []struct{ q, want string }{
		{"What compensation do I get if uptime is too low?", "10%"},
		{"Is there a refund when uptime falls short?", "10%"},
		{"Can I get a refund if I cancel my plan?", ""},
		{"Do you accept bank cards?", "Credit cards"},
		{"Can I pay with plastic?", "Credit cards"},
	} {
		checkAnswer(t, tt.q, rs, tt.want)
	}
}
