package chatbot_test

import "testing"

// reviewCases are phrasings of the classes a review of the demo-open
// change found wrong, asked of the real model, each class with phrasings
// that must not take the behaviour: a typing slip that is a word of its
// own ("trail"); thanks or a greeting followed by a question; a follow-up
// or correction after a greeted question; a synonym whose stem is short
// ("promise"); compounds of opposite counts.
var reviewCases = []demoCase{
	{kind: "slip", say: "Is there a free trail?", tools: []string{"search_knowledge"}, want: []string{"14-day"}},
	{kind: "slip", say: "How long is the free trail?", tools: []string{"search_knowledge"}, want: []string{"14-day"}},
	{kind: "slip", say: "What are your pricing tires?", tools: []string{"search_knowledge"}, want: []string{"four pricing tiers"}},

	{kind: "thanks", say: "thanks, but what about SSO?", tools: []string{"search_knowledge"}, notWant: []string{"welcome"}},
	{kind: "thanks", say: "Thanks! And for Business?", notWant: []string{"welcome"}},
	{kind: "thanks", say: "Cheers, what does Team cost?", tools: []string{"search_knowledge"}, want: []string{"$49"}},
	{kind: "thanks", say: "Gracias! And Team?", notWant: []string{"welcome"}},
	{kind: "thanks", say: "thanks a lot!", noTools: true, want: []string{"welcome"}},
	{kind: "thanks", say: "ok thanks, bye", noTools: true, want: []string{"welcome"}},
	{kind: "thanks", say: "Thank you so much", noTools: true, want: []string{"welcome"}},

	{kind: "greeting", say: "Hey, I need an invoice", notWant: []string{"What would you like to know"}},
	{kind: "greeting", say: "Hi, refund policy?", tools: []string{"search_knowledge"}, notWant: []string{"What would you like to know"}},
	{kind: "greeting", say: "Hello, SSO on Team?", tools: []string{"search_knowledge"}, notWant: []string{"What would you like to know"}},
	{kind: "greeting", say: "How are you doing?", noTools: true, want: []string{"Hello"}},
	{kind: "greeting", say: "Hi, how are you today?", noTools: true, want: []string{"Hello"}},
	{kind: "greeting", say: "Hello there!", noTools: true, want: []string{"Hello"}},
	{kind: "greeting", say: "hey, how's it going?", noTools: true, want: []string{"Hello"}},

	{kind: "greeted-follow-up", before: []string{"Hi! What does the Team plan cost?"}, say: "and Business?",
		tools: []string{"search_knowledge"}, want: []string{"$89"}},
	{kind: "greeted-follow-up", before: []string{"Hello, how much is the Starter plan?"}, say: "Sorry, I meant Team",
		tools: []string{"search_knowledge"}, want: []string{"$49"}, notWant: []string{"$19"}},
	{kind: "greeted-follow-up", before: []string{"Good morning, what does Business cost?"}, say: "Actually, Team",
		tools: []string{"search_knowledge"}, want: []string{"$49"}, notWant: []string{"$89"}},

	{kind: "greeted-follow-up", before: []string{"Hey there, does the Team plan include SSO?"}, say: "Actually I meant Business",
		tools: []string{"search_knowledge"}, want: []string{"single sign-on"}},
	{kind: "greeted-follow-up", before: []string{"Thanks! How much is Starter?"}, say: "what did I ask first?",
		want: []string{"How much is Starter"}, notWant: []string{"Thanks!"}},

	{kind: "synonym", say: "Is there an uptime promise on Business?", tools: []string{"search_knowledge"}, want: []string{"99.9%"}},
	{kind: "synonym", say: "What uptime do you promise on Enterprise?", tools: []string{"search_knowledge"}, want: []string{"99.95%"}},

	{kind: "counts", say: "Is there a multi-tenant region?", notWant: []string{"single-tenant"}},
	{kind: "counts", say: "Do you offer a single-tenant region?", tools: []string{"search_knowledge"}, want: []string{"single-tenant"}},
	{kind: "counts", say: "Is single-factor login allowed?", notWant: []string{"multi-factor"}},
	{kind: "counts", say: "Do you support two-factor authentication?", tools: []string{"search_knowledge"}, want: []string{"multi-factor"}},
}

// TestDemoReviewCases checks the classes above; every case must pass.
func TestDemoReviewCases(t *testing.T) {
	runDemoCases(t, reviewCases, true)
}
