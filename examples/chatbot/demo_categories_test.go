package chatbot_test

import "testing"

// fix5Cases are the classes a review of the demo-gaps5 rules found
// wrong, each asked in words other than the review's.
var fix5Cases = []demoCase{
	// A category's words name our own help desk unless the question asks
	// about connecting to a product of the kind.
	{kind: "own-desk", say: "What are your help desk hours?", want: []string{"08:00"}},
	{kind: "own-desk", say: "Help desk hours?", want: []string{"08:00"}},
	{kind: "own-desk", say: "What hours is the support desk open?", want: []string{"08:00"}},
	{kind: "own-desk", say: "What hours does the ticketing team work?", want: []string{"08:00"}},
	{kind: "connect-desk", say: "Can we import data from our service desk?", want: []string{"Zendesk"}},

	// "advertising" alone is not an ad platform, and the topic guard
	// reads the words on each side of the preposition as the question.
	{kind: "advertising", say: "Is my data used for advertising purposes?", notWant: []string{"Google Ads", "HubSpot"}},
	{kind: "advertising", say: "Will you share our information for advertising?", notWant: []string{"Google Ads", "HubSpot"}},
	{kind: "advertising", say: "Can we export conversions to our ad platform?", want: []string{"Google Ads"}},

	// Texting forms of several letters in any case.
	{kind: "texting-case", say: "Where's the head office located?", want: []string{"Lisbon"}},
	{kind: "texting-case", say: "WHERE'S your HQ?", want: []string{"Lisbon"}},
	{kind: "texting-case", say: "Wheres your head office?", want: []string{"Lisbon"}},
}

// TestDemoFix5 checks every class above; the own-desk, advertising and
// texting-case ones failed before the fix.
func TestDemoFix5(t *testing.T) {
	runDemoCases(t, fix5Cases, true)
}
