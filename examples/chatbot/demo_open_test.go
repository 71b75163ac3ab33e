package chatbot_test

import "testing"

// openGapCases are held-out phrasings of seven kinds the demo model got
// wrong: a greeting in another language mixed with others or with a
// "how are you"; a term written with another count ("two-factor" for
// "multi-factor"); a follow-up that names another plan and keeps the
// attribute asked before; a product, not a plan, asked the price of;
// a unit qualified ("2 business hours" is not "2 business days"); a
// capitalised first word that is no name. Each kind has cases that must
// not take the behaviour.
var openGapCases = []demoCase{
	{kind: "greeting", say: "hallo, guten morgen", noTools: true, want: []string{"Hello", "English"}, notWant: []string{"couldn't find"}},
	{kind: "greeting", say: "Buenos días, ¿qué tal?", noTools: true, want: []string{"Hello"}},
	{kind: "greeting", say: "Bonjour tout le monde !", noTools: true, want: []string{"Hello"}},
	{kind: "greeting", say: "Ciao! Come stai?", noTools: true, want: []string{"Hello"}},
	{kind: "greeting", say: "hey, bonsoir", noTools: true, want: []string{"Hello"}},
	{kind: "greeting", say: "Hola amigo, muchas gracias", noTools: true, want: []string{"welcome"}},
	{kind: "greeting", say: "Hola, how much is the Team plan?", tools: []string{"search_knowledge"}, want: []string{"$49"}},
	{kind: "greeting", say: "Hi! What does Business cost?", tools: []string{"search_knowledge"}, want: []string{"$89"}, notWant: []string{"What would you like to know"}},
	{kind: "greeting", say: "Good morning, what is the refund window?", tools: []string{"search_knowledge"}, notWant: []string{"What would you like to know"}},

	{kind: "counted", say: "Do you support two-factor authentication?", tools: []string{"search_knowledge"}, want: []string{"multi-factor"}, notWant: []string{"could not find"}},
	{kind: "counted", say: "Is 2-factor login enforced on Business?", tools: []string{"search_knowledge"}, want: []string{"multi-factor"}},
	{kind: "counted", say: "Do you offer multi factor auth?", tools: []string{"search_knowledge"}, want: []string{"multi-factor"}},
	{kind: "counted", say: "Is there twofactor authentication for logins?", tools: []string{"search_knowledge"}, want: []string{"multi-factor"}},
	{kind: "counted", say: "Is there a two-year discount?", notWant: []string{"multi-factor"}},

	{kind: "attribute", before: []string{"What is the API rate limit on the Business plan?"}, say: "and for the Team plan?",
		tools: []string{"search_knowledge"}, want: []string{"60 requests"}, notWant: []string{"$49", "$89"}},
	{kind: "attribute", before: []string{"What is the first-response target on Business?"}, say: "what about Team?",
		tools: []string{"search_knowledge"}, want: []string{"one business day"}, notWant: []string{"$49"}},
	{kind: "attribute", before: []string{"How much does the Business plan cost?"}, say: "and Team?",
		tools: []string{"search_knowledge"}, want: []string{"$49"}},

	{kind: "product", say: "How much does Forecast cost?", tools: []string{"search_knowledge"}, want: []string{"$15"}, notWant: []string{"$19", "$89"}},
	{kind: "product", say: "What do Pipelines and Forecast cost?", tools: []string{"search_knowledge"}, want: []string{"$15"}, notWant: []string{"$19", "Starter costs"}},
	{kind: "product", say: "How much is the Starter plan?", tools: []string{"search_knowledge"}, want: []string{"$19"}},
	// What is asked outranks the name: the discount sentence answers for
	// Starter though it names only Team and Business.
	{kind: "product", say: "Do schools get a discount on Starter?", tools: []string{"search_knowledge"}, want: []string{"40%"}},
	{kind: "product", say: "Is there a non-profit discount for the Business plan?", tools: []string{"search_knowledge"}, want: []string{"40%"}, notWant: []string{"$89"}},

	{kind: "units", say: "Do you escalate tickets within 2 business hours?", tools: []string{"search_knowledge"}, notWant: []string{"two business days"}},
	{kind: "units", say: "Are security reports acknowledged within 2 business days?", tools: []string{"search_knowledge"}, want: []string{"two business days"}},

	{kind: "first-word", before: []string{"Thanks. How much is the Team plan?"}, say: "Actually I meant Business",
		tools: []string{"search_knowledge"}, want: []string{"$89"}, notWant: []string{"$49"}},
	{kind: "first-word", before: []string{"Hi! What does the Starter plan cost?"}, say: "Sorry, I meant Team",
		tools: []string{"search_knowledge"}, want: []string{"$49"}, notWant: []string{"$19"}},
	{kind: "first-word", before: []string{"How much is the Team plan?"}, say: "Actually, Enterprise",
		tools: []string{"search_knowledge"}, want: []string{"$30,000"}},

	// Found by asking the real binary new questions: words that grade or
	// hedge ("main", "instead") need no passage of their own, a guarantee
	// is a commitment, and a word is no form of another that only shares
	// its first four letters ("trail" and "training").
	{kind: "asked", say: "Who are your main competitors?", want: []string{"Northwind"}},
	{kind: "asked", say: "Who is our biggest rival in retail?", want: []string{"Northwind"}},
	{kind: "asked", say: "Can we be billed monthly instead?", tools: []string{"search_knowledge"}, want: []string{"20% more"}},
	{kind: "asked", say: "Is there an uptime guarantee on Enterprise?", tools: []string{"search_knowledge"}, want: []string{"99.95%"}},
	{kind: "asked", say: "Do you promise any uptime to Business customers?", tools: []string{"search_knowledge"}, want: []string{"99.9%"}},
	{kind: "asked", say: "What is the maternity guarantee for Team?", notWant: []string{"Here is what I found"}},
}

// TestDemoOpenGaps checks the kinds above; every case must pass.
func TestDemoOpenGaps(t *testing.T) {
	runDemoCases(t, openGapCases, true)
}
