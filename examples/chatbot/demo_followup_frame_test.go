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

// gaps2HeldOut are phrasings of the same kinds (a follow-up of a
// follow-up, spelled-out numbers, abbreviations, quotes that share what
// is asked) that the rules were not run against while they were written.
var gaps2HeldOut = []demoCase{
	{kind: "frame", before: []string{"What's the price of Business?", "and for 7 people monthly?"}, say: "how about Team?",
		tools: []string{"calculate"}, want: []string{"343"}},
	{kind: "frame", before: []string{"How much does Team cost?", "and for 8 editors per year?"}, say: "and Starter?",
		tools: []string{"calculate"}, want: []string{"do not fit", "4,704"}},
	{kind: "spelled", say: "Which tier comes with twenty data sources?", tools: []string{"search_knowledge"}, want: []string{"20 data sources"}, notWant: []string{"3 data sources"}},
	{kind: "spelled", say: "How much do nine editors cost on Business per month?", tools: []string{"calculate"}, want: []string{"801"}},
	{kind: "abbrev", say: "What is a sev 4 ticket?", tools: []string{"search_knowledge"}, want: []string{"Severity 4"}},
	{kind: "abbrev", say: "Is MFA supported?", tools: []string{"search_knowledge"}, want: []string{"multi-factor"}},
	{kind: "share", say: "Which plan has a 4 hour response target?", tools: []string{"search_knowledge"}, want: []string{"4 hours"}, notWant: []string{"14-day"}},
	{kind: "share", say: "Which tier syncs every five minutes?", tools: []string{"search_knowledge"}, want: []string{"every 5 minutes"}, notWant: []string{"14-day"}},
}

// TestDemoGaps2HeldOut reports how the held-out phrasings fare.
func TestDemoGaps2HeldOut(t *testing.T) {
	if rate := runDemoCases(t, gaps2HeldOut, false); rate < 0.7 {
		t.Errorf("held-out pass rate %.0f%%, want at least 70%%", rate*100)
	}
}
