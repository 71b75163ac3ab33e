package chatbot_test

import "testing"

// frameCases are follow-ups that lean on other follow-ups: the whole
// frame asked before (seats, period) is carried over to the plan the
// last message names, with the seat-cap warning where it applies.
var frameCases = []demoCase{
	{kind: "frame", before: []string{"How much is the Team plan?", "and for 12 editors per year?"}, say: "what about Starter?",
		tools: []string{"search_knowledge", "calculate"}, want: []string{"2,736", "up to 5", "7,056"}},
	{kind: "frame", before: []string{"What does Business cost for 6 editors?", "and per year?"}, say: "and for Starter?",
		tools: []string{"calculate"}, want: []string{"per year", "do not fit", "3,528"}},
	{kind: "frame", before: []string{"How much is the Starter plan?", "and for 3 seats?"}, say: "how about Business?",
		tools: []string{"calculate"}, want: []string{"267"}, notWant: []string{"$57"}},
}

// TestDemoFollowUpFrame checks the follow-ups of follow-ups.
func TestDemoFollowUpFrame(t *testing.T) {
	runDemoCases(t, frameCases, true)
}
