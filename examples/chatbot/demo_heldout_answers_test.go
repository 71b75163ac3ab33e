package chatbot_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// heldOutAnswerCase is a question of heldOutAnswerCases: want lists the
// answers that are right (any one of them); none means the knowledge base
// does not say, and the one right answer is to decline.
type heldOutAnswerCase struct {
	say  string
	want []string
}

// heldOutAnswerCases ask for facts of the bundled documents in other
// words (synonyms of a later WordNet sense, "gratis"; everyday phrases,
// "money off"; a negation, "which tiers don't include API access?") and
// for what they do not hold (a product of ours that does not exist, "the
// Acme HR module"; a fact they never give). They were written before the
// changes they measure and run only before and after them, never while
// tuning.
var heldOutAnswerCases = []heldOutAnswerCase{
	{say: "How many staff members does Acme have?", want: []string{"140"}},
	{say: "How much does Acme charge for an editor seat on the Team tier?", want: []string{"$49"}},
	{say: "Do charities get a reduced price?", want: []string{"40%"}},
	{say: "Is there a gratis trial?", want: []string{"14-day"}},
	{say: "Which payment options do you take?", want: []string{"Credit cards"}},
	{say: "What's the reimbursement when availability falls below the commitment?", want: []string{"10%"}},
	{say: "How long is the test period before paying?", want: []string{"14-day"}},
	{say: "Which plans lack a contractual SLA?", want: []string{"no contractual SLA"}},
	{say: "Which tiers don't include API access?", want: []string{"not available on Starter", "API access on Starter"}},
	{say: "Which plans don't come with forecasting?", want: []string{"Forecast or API access on Starter", "included in Business"}},
	{say: "What is the minimum term for Globex?", want: []string{"12-month"}},
	{say: "How long are cached query results retained?", want: []string{"24 hours"}},
	{say: "How fast do you acknowledge a vulnerability report?", want: []string{"two business days"}},
	{say: "What encryption protects stored data?", want: []string{"AES-256"}},
	{say: "In which regions can my data be hosted?", want: []string{"Frankfurt"}},
	{say: "How many webhooks can a workspace set up?", want: []string{"20 webhooks"}},
	{say: "What happens when I exceed the rate limit?", want: []string{"429"}},
	{say: "How many sessions with an engineer do new Team customers get during onboarding?", want: []string{"two onboarding calls"}},
	{say: "What is the cost of the forecasting add-on for Team?", want: []string{"$15"}},
	{say: "How often is data refreshed on the entry-level plan?", want: []string{"daily"}},
	{say: "Who do I contact to buy more than 100 seats?", want: []string{"contact sales", "volume discount"}},
	{say: "What's the first-response time for email tickets on Team?", want: []string{"one business day"}},
	{say: "Do read-only users need a license?", want: []string{"Viewers are free", "Only editors"}},
	{say: "Can I run Acme on my own servers?", want: []string{"cloud service only"}},
	{say: "Do universities get money off?", want: []string{"40%"}},
	{say: "How much time do I have to claim a service credit?", want: []string{"30 days"}},
	{say: "How much does the Plus tier of Initech cost?", want: []string{"$35"}},
	{say: "Which plans don't offer 24/7 phone support?", want: []string{"phone support"}},
	{say: "What is the size of the Acme workforce?", want: []string{"140"}},
	{say: "What does the Acme Mobile add-on cost?", want: []string{}},
	{say: "How much is the Acme HR module?", want: []string{}},
	{say: "What is Acme's stock ticker symbol?", want: []string{}},
	{say: "How many parking spaces does the Lisbon office have?", want: []string{}},
	{say: "What is the Acme Marketplace commission?", want: []string{}},
	{say: "What does the Premium plan cost?", want: []string{}},
	{say: "Does Acme offer a lifetime licence?", want: []string{}},
	{say: "What's the refund policy for cancelled annual contracts?", want: []string{}},
	{say: "How much does the Acme Connect gateway cost?", want: []string{}},
	{say: "Who is Acme's head of marketing?", want: []string{}},
	{say: "Do you support Oracle databases?", want: []string{}},
	{say: "What is the interest rate on late invoices?", want: []string{}},
}

// TestDemoHeldOutAnswers runs heldOutAnswerCases and counts each answer
// right, false (quotes passages without the fact, or answers what the
// documents do not hold) or declined; a false answer is worse than a
// decline. Of the 29 facts, 18 were right, 4 false and 7 declined before
// WordNet's later senses, negations as function words and the list
// filter; 21, 3 and 5 after. Of the 12 the documents do not hold, 11
// were declined before and after.
func TestDemoHeldOutAnswers(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	var right, wrong, declined, noneRight, noneWrong int
	for i, c := range heldOutAnswerCases {
		ans := chat(t, srv, fmt.Sprintf("held-out-%d", i), c.say).answer()
		quoted := strings.Contains(ans, "Here is what I found")
		switch {
		case len(c.want) == 0 && quoted:
			noneWrong++
			t.Logf("FALSE %q: the documents do not say\nanswer: %s", c.say, ans)
		case len(c.want) == 0:
			noneRight++
		case containsAnyFold(ans, c.want):
			right++
		case quoted:
			wrong++
			t.Logf("FALSE %q: want one of %q\nanswer: %s", c.say, c.want, ans)
		default:
			declined++
			t.Logf("DECLINED %q: want one of %q", c.say, c.want)
		}
	}
	t.Logf("facts: %d right, %d false, %d declined; not in the documents: %d declined, %d false", right, wrong, declined, noneRight, noneWrong)
	if right < 21 || wrong > 3 || noneWrong > 1 {
		t.Errorf("facts %d right (want at least 21), %d false (want at most 3); %d false answers to what the documents do not hold (want at most 1)",
			right, wrong, noneWrong)
	}
}

// containsAnyFold reports whether s holds one of subs, ignoring case.
func containsAnyFold(s string, subs []string) bool {
	s = strings.ToLower(s)
	for _, x := range subs {
		if strings.Contains(s, strings.ToLower(x)) {
			return true
		}
	}
	return false
}
