package chatbot_test

import "testing"

// paraphrasedFactCases ask for facts of the bundled documents in words
// the documents do not use for them: a synonym or a more general or
// more specific word ("price cut", "headcount", "personnel"), a phrase
// for one word ("no-cost evaluation period" for "free trial"), another
// word order. Each wants the fact. They were written with a list of
// questions of the same kinds that the rules for related words and
// phrases were developed on; these were only counted, before and after,
// so that their pass rate measures how the rules generalise.
var paraphrasedFactCases = []demoCase{
	{kind: "paraphrase", say: "What is the headcount of the company?", want: []string{"140"}},
	{kind: "paraphrase", say: "In what year was the business established?", want: []string{"2019"}},
	{kind: "paraphrase", say: "In which cities does Acme have personnel?", want: []string{"Toronto"}},
	{kind: "paraphrase", say: "Do educational institutions get a price cut?", want: []string{"40%"}},
	{kind: "paraphrase", say: "How long is the no-cost evaluation period?", want: []string{"14-day"}},
	{kind: "paraphrase", say: "What is the monthly fee per editor for the Business tier?", want: []string{"$89"}},
	{kind: "paraphrase", say: "What does the Enterprise package typically cost annually?", want: []string{"$30,000"}},
	{kind: "paraphrase", say: "How many API calls per day does Team get?", want: []string{"10,000"}},
	{kind: "paraphrase", say: "How long before a single API query is cancelled?", want: []string{"120 seconds"}},
	{kind: "paraphrase", say: "How many rows come back on each page of results?", want: []string{"10,000 rows"}},
	{kind: "paraphrase", say: "For how many days are backups stored?", want: []string{"kept for 30 days"}},
	{kind: "paraphrase", say: "When I terminate my workspace, how long until all data is erased?", want: []string{"Closing a workspace"}},
	{kind: "paraphrase", say: "Where do I send a GDPR erasure request?", want: []string{"privacy@acme.example"}},
	{kind: "paraphrase", say: "When does moving to a lower tier take effect?", want: []string{"next renewal"}},
	{kind: "paraphrase", say: "How can I pay for the service?", want: []string{"Credit cards"}},
	{kind: "paraphrase", say: "How many connectors does Pipelines offer?", want: []string{"120"}},
	{kind: "paraphrase", say: "Which identity services work for single sign-on?", want: []string{"Okta"}},
	{kind: "paraphrase", say: "How many visualization kinds does Insights offer?", want: []string{"40 chart types"}},
	{kind: "paraphrase", say: "What authentication does the REST interface use?", want: []string{"OAuth"}},
	{kind: "paraphrase", say: "By how much did dashboard performance get better in the July release?", want: []string{"35%"}},
	{kind: "paraphrase", say: "Which compliance audits has Acme passed?", want: []string{"SOC 2"}},
	{kind: "paraphrase", say: "How is information protected while it travels over the network?", want: []string{"TLS 1.2"}},
	{kind: "paraphrase", say: "What fraction of the monthly charge is refunded if uptime falls under 95%?", want: []string{"50%"}},
	{kind: "paraphrase", say: "How much advance warning is given for planned maintenance?", want: []string{"5 days"}},
	{kind: "paraphrase", say: "How quickly do urgent Enterprise problems get a first reply?", want: []string{"1 hour"}},
	{kind: "paraphrase", say: "What counts as the most severe incident level?", want: []string{"production outage"}},
	{kind: "paraphrase", say: "How long does a typical Acme deployment take?", want: []string{"two weeks"}},
}

// unanswerableCases ask what the documents do not say, several in words
// the documents use for something else ("employees", "founder",
// "discount", "free", "Singapore"), or in words WordNet relates to
// theirs ("managing director" of "account manager", "occupants" of
// "residents"): the demo model must say it found nothing rather than
// quote passages on another subject.
var unanswerableCases = []demoCase{
	{kind: "unanswerable", say: "How many vacation days do employees get?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "Who is the founder of Acme?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "What is the price of your mobile app?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "Do you offer a discount for military veterans?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "What is the weather in Lisbon today?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "How much does the CEO earn?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "Does Acme support blockchain ledgers?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "What is the dress code at the Toronto office?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "Can I pay with Bitcoin?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "How many floors does the Singapore building have?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "What is the recipe for Portuguese custard tarts?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "Does the Starter plan include a free laptop?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "Which football club sponsors Acme?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "What is the maternity leave policy for staff?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "Who is the managing director of Acme?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "unanswerable", say: "How many occupants does the Lisbon office have?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
}

// TestDemoParaphrasedFacts runs paraphrasedFactCases and fails under its
// floor: 9 of 27 passed before WordNet's related words and phrase
// synonyms (lexicon.Related, lexicon.PhraseSynonyms), 10 of 27 after,
// and still 10 once related words no longer say what a passage is about
// and a phrase counts as one word.
// Most of the others ask in words WordNet does not relate to the
// documents' within one step ("headcount", "personnel" and
// "employees"; "compliance audits" and "SOC 2 report").
func TestDemoParaphrasedFacts(t *testing.T) {
	const floor = 10.0 / 27
	if rate := runDemoCases(t, paraphrasedFactCases, false); rate < floor {
		t.Errorf("paraphrased-fact pass rate %.0f%%, want at least %.0f%%", rate*100, floor*100)
	}
}

// TestDemoUnanswerable checks that every unanswerableCases question is
// answered that the sources do not cover it.
func TestDemoUnanswerable(t *testing.T) {
	runDemoCases(t, unanswerableCases, true)
}
