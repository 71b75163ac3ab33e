package chatbot_test

import "testing"

// recallTuningCases ask for facts of the bundled knowledge documents in
// a user's own words: synonyms, informal and abbreviated wording, other
// question forms. They are the list the knowledge server's ranking by
// topic, related words and answer kind was tuned on; recallHeldOutCases
// (demo_recall_heldout_test.go) measure how that ranking generalises.
var recallTuningCases = []demoCase{
	{kind: "workforce", say: "How big is Acme's staff?", want: []string{"140"}},
	{kind: "workforce", say: "How many people work at Acme?", want: []string{"140"}},
	{kind: "founded", say: "When did Acme get started?", want: []string{"2019"}},
	{kind: "founded", say: "How old is the company?", want: []string{"2019"}},
	{kind: "trial", say: "Can I try Acme before paying?", want: []string{"14-day"}},
	{kind: "trial", say: "How long can I test the product for free?", want: []string{"14-day"}},
	{kind: "yearly", say: "Do you give a discount if I pay annually?", want: []string{"20%"}},
	{kind: "yearly", say: "Is paying monthly more expensive than paying yearly?", want: []string{"20%"}},
	{kind: "response", say: "How fast will support get back to me on Team?", want: []string{"one business day"}},
	{kind: "response", say: "What's the reply time for Business customers?", want: []string{"4 hours"}},
	{kind: "outage", say: "What do I get if your service goes down?", want: []string{"10%"}},
	{kind: "outage", say: "Do you compensate customers for downtime?", want: []string{"10%"}},
	{kind: "offices", say: "Which countries do you have offices in?", want: []string{"Toronto"}},
	{kind: "demo", say: "How long is a product demo?", want: []string{"45 minutes"}},
	{kind: "customers", say: "How many businesses use Acme?", want: []string{"2,300"}},
	{kind: "customers", say: "What's the size of your customer base?", want: []string{"2,300"}},
	{kind: "cards", say: "Do you take Visa or Mastercard?", want: []string{"Credit cards"}},
	{kind: "hq", say: "Where is Acme based?", want: []string{"Lisbon"}},
	{kind: "uptime", say: "What availability do you guarantee on Enterprise?", want: []string{"99.95%"}},
	{kind: "price", say: "How much is the Team tier per seat?", want: []string{"$49"}},
	{kind: "price", say: "What does Business cost a month?", want: []string{"$89"}},
	{kind: "nonprofit", say: "Do charities get cheaper pricing?", want: []string{"40%"}},
	{kind: "cheapest", say: "What is your least expensive plan?", want: []string{"$19"}},
	{kind: "other", say: "Which certifications do you have?", want: []string{"SOC 2"}},
	{kind: "other", say: "How long are backups retained?", want: []string{"30 days"}},
	{kind: "other", say: "What's the API rate limit on Business?", want: []string{"300 requests per minute"}},
	{kind: "other", say: "What encryption do you use for stored data?", want: []string{"AES-256"}},
	{kind: "other", say: "How many data connectors are there?", want: []string{"120"}},
}

// recallPrecisionCases ask what the documents do not say, most of them
// next to a fact they do say (a count of customers in one country, an
// office's opening year, a discount for another term): the answer must
// say nothing was found rather than offer the neighbouring fact.
var recallPrecisionCases = []demoCase{
	{kind: "precision", say: "What is the CEO's name?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "precision", say: "How many parking spots are at the Lisbon office?", want: []string{"find"}, notWant: []string{"Here is what I found", "140"}},
	{kind: "precision", say: "Which stock exchange is Acme listed on?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "precision", say: "How much revenue did Acme make last year?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "precision", say: "When was the Toronto office opened?", want: []string{"find"}, notWant: []string{"Here is what I found", "2019"}},
	// Were recallPrecisionGaps until a value asked had to be given by a
	// sentence about what the question names (demo5): "renewed every
	// year" gives no year of a listing, and "Around 2,300 customers use
	// the platform" counts no customers of Forecast.
	{kind: "precision", say: "What year will Acme go public?", want: []string{"find"}, notWant: []string{"Here is what I found", "2019"}},
	{kind: "precision", say: "How many customers use Forecast?", want: []string{"find"}, notWant: []string{"Here is what I found", "2,300"}},
	{kind: "precision", say: "Is there a discount for government agencies?", want: []string{"find"}, notWant: []string{"Here is what I found", "40%"}},
	{kind: "precision", say: "What is the salary of a support engineer?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "precision", say: "Do you sell hardware?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "precision", say: "How many customers are in Japan?", want: []string{"find"}, notWant: []string{"Here is what I found", "2,300"}},
	{kind: "precision", say: "What is the phone number of the Lisbon office?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "precision", say: "What's the discount for paying three years upfront?", want: []string{"find"}, notWant: []string{"Here is what I found", "20%"}},
	{kind: "precision", say: "How long is the warranty on laptops?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "precision", say: "What is the office dog's name?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
	{kind: "precision", say: "How many employees will Acme hire next year?", want: []string{"find"}, notWant: []string{"Here is what I found", "140"}},
	{kind: "precision", say: "Who started the company?", want: []string{"find"}, notWant: []string{"Here is what I found", "2019"}},
	{kind: "precision", say: "How many staff work in the Singapore office?", want: []string{"find"}, notWant: []string{"Here is what I found", "140"}},
}

// recallCorpusPrecisionCases ask what the documents do not say in words
// they all hold (unlike several recallPrecisionCases, whose "office",
// "Japan" or "hire" no document holds, so that a missing word alone says
// nothing was found): the value beside them is of something else.
var recallCorpusPrecisionCases = []demoCase{
	{kind: "precision", say: "How old is the Singapore team?", want: []string{"find"}, notWant: []string{"Here is what I found", "2019"}},
	{kind: "precision", say: "Since when does Acme have customers in Toronto?", notWant: []string{"2019"}},
	{kind: "precision", say: "How many employees are in support?", want: []string{"find"}, notWant: []string{"Here is what I found", "140"}},
	{kind: "precision", say: "How do I get a refund?", notWant: []string{"Service credits", "credit of 10%"}},
	{kind: "precision", say: "When does the Starter plan renew?", notWant: []string{"2019", "founded"}},
}

// recallPrecisionGaps are precision questions that main (16010a5)
// already answered with a passage on another subject, and still does:
// "the minimum age to use Acme" finds the company's description.
// TestDemoRecallPrecision requires that they still fail
// (recallPrecisionGapsPassing), so that a change that fixes one, or one
// that breaks a case here, is seen and the count updated.
var recallPrecisionGaps = []demoCase{
	{kind: "precision", say: "What is the minimum age to use Acme?", want: []string{"find"}, notWant: []string{"Here is what I found"}},
}

// TestDemoRecallTuning runs recallTuningCases and fails under its
// floor: 11 of 28 passed on main (16010a5), 19 of 28 once a count or a
// year asked picks a sentence that gives one, related words keep derived
// forms first, and synonyms in everyday use (lexicon.Usage) count, 20
// once the people who work at a place are its employees, and 21 once
// "for free" qualifies no topic; 20 once "compensate" no longer finds
// service credits through the stem of "compensation" (a refund is no
// service credit).
func TestDemoRecallTuning(t *testing.T) {
	const floor = 20.0 / 28
	if rate := runDemoCases(t, recallTuningCases, false); rate < floor {
		t.Errorf("recall tuning pass rate %.0f%%, want at least %.0f%%", rate*100, floor*100)
	}
}

// TestDemoRecallPrecision checks that every recallPrecisionCases and
// recallCorpusPrecisionCases question is answered without the
// neighbouring fact, and that recallPrecisionGaps still pass as many as
// recorded.
func TestDemoRecallPrecision(t *testing.T) {
	runDemoCases(t, recallPrecisionCases, true)
	runDemoCases(t, recallCorpusPrecisionCases, true)
	if got := runDemoCases(t, recallPrecisionGaps, false) * float64(len(recallPrecisionGaps)); int(got+0.5) != recallPrecisionGapsPassing {
		t.Errorf("%d of %d recallPrecisionGaps pass, want %d: update recallPrecisionGapsPassing (and move a fixed case to recallPrecisionCases)",
			int(got+0.5), len(recallPrecisionGaps), recallPrecisionGapsPassing)
	}
}

// recallPrecisionGapsPassing is how many recallPrecisionGaps pass.
const recallPrecisionGapsPassing = 0
