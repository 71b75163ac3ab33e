package chatbot_test

import "testing"

// recallHeldOutCases ask for the same kinds of facts as recallTuningCases
// in other words. They were written with that list, before any change to
// the ranking, and were run only before and after it, never while tuning:
// their pass rate measures how the ranking generalises. Two of them,
// whose words ("evaluate", "refund") the everyday synonyms
// (lexicon.Usage) were later written with, were replaced by the trial and
// outage questions here, written before they were first run.
var recallHeldOutCases = []demoCase{
	{kind: "workforce", say: "What's Acme's employee count?", want: []string{"140"}},
	{kind: "workforce", say: "How large is the team at Acme?", want: []string{"140"}},
	{kind: "founded", say: "What year did Acme open for business?", want: []string{"2019"}},
	{kind: "founded", say: "Since when has Acme existed?", want: []string{"2019"}},
	{kind: "trial", say: "Is there a trial period?", want: []string{"14-day"}},
	{kind: "trial", say: "Is there a way to use Acme free for a couple of weeks first?", want: []string{"14-day"}},
	{kind: "yearly", say: "Is annual billing cheaper?", want: []string{"20%"}},
	{kind: "yearly", say: "How much extra does month-to-month billing cost?", want: []string{"20%"}},
	{kind: "response", say: "How quickly do you answer support tickets on the Business plan?", want: []string{"4 hours"}},
	{kind: "response", say: "How soon does someone respond to a critical problem on Enterprise?", want: []string{"1 hour"}},
	{kind: "outage", say: "What do customers get when uptime drops below the SLA?", want: []string{"10%"}},
	{kind: "outage", say: "What happens if you miss your uptime target?", want: []string{"10%"}},
	{kind: "offices", say: "Where are Acme's offices?", want: []string{"Toronto"}},
	{kind: "demo", say: "How many minutes does a demo take?", want: []string{"45 minutes"}},
	{kind: "customers", say: "How many customers do you have?", want: []string{"2,300"}},
	{kind: "customers", say: "How many companies are your clients?", want: []string{"2,300"}},
	{kind: "cards", say: "Can I pay with a credit card?", want: []string{"Credit cards"}},
	{kind: "hq", say: "Where's the head office?", want: []string{"Lisbon"}},
	{kind: "uptime", say: "What's the uptime SLA for Business customers?", want: []string{"99.9%"}},
	{kind: "uptime", say: "What's your guaranteed availability?", want: []string{"99.9"}},
	{kind: "price", say: "How much is the Starter plan?", want: []string{"$19"}},
	{kind: "price", say: "What's the price per user for Business?", want: []string{"$89"}},
	{kind: "nonprofit", say: "Is there a nonprofit discount?", want: []string{"40%"}},
	{kind: "cheapest", say: "Which plan is the cheapest?", want: []string{"Starter"}},
	{kind: "cheapest", say: "What's the lowest price tier?", want: []string{"$19"}},
	{kind: "other", say: "Are you ISO certified?", want: []string{"ISO 27001"}},
	{kind: "other", say: "How long do you keep audit logs?", want: []string{"one year"}},
	{kind: "other", say: "How many API requests per day on Team?", want: []string{"10,000"}},
}

// TestDemoRecallHeldOut runs recallHeldOutCases and fails under its
// floor: 18 of 28 of the first list passed on main (16010a5); with the
// two replaced questions, 20 of 28 after the changes recallTuningCases
// was tuned on (69daac1), both replaced ones failing, and 20 of 28 once
// the everyday synonyms are looked up by form and the value bonus never
// stands for a focus word a passage lacks.
func TestDemoRecallHeldOut(t *testing.T) {
	const floor = 20.0 / 28
	if rate := runDemoCases(t, recallHeldOutCases, false); rate < floor {
		t.Errorf("recall held-out pass rate %.0f%%, want at least %.0f%%", rate*100, floor*100)
	}
}
