package offline

import (
	"slices"
	"strings"
	"testing"
)

// planResults is a search result with the sections planOffers reads: a
// plan capped at five editors, one without a cap that adds to it, one
// that adds more, and one priced otherwise.
var planResults = []result{{source: "search_knowledge", text: `10 passages for "plans", best first:

[1] pricing § Basic (score 3.00)
Basic costs $10 per editor per month for up to 5 editors. There is no API access on Basic.

[2] pricing § Pro (score 2.90)
Pro costs $30 per editor per month with no editor limit. It adds API access and webhooks.

[3] pricing § Max (score 2.80)
Max costs $60 per editor per month. It adds audit logs and a 2-hour response target.

[4] pricing § Custom (score 2.70)
Custom pricing is negotiated and usually starts at $20,000 per year.
`}}

// TestComparePlans checks that a choice between named plans is answered
// on what it asks (price, room for the team, a need) from the plans the
// results describe, and that names which are not plans are left to the
// other rules.
func TestComparePlans(t *testing.T) {
	for _, tt := range []struct {
		q             string
		want, notWant []string
	}{
		{"which is cheaper, Basic or Pro?", []string{"Basic is the cheaper of Basic and Pro", "$10", "$30"}, nil},
		{"Pro vs Max: which costs less?", []string{"Pro is the cheaper"}, []string{"Basic"}},
		{"is Basic or Pro better for 8 editors?", []string{"Pro is the better fit for 8 people", "at most 5 editors, so 8 do not fit", "8 × $30 = $240"}, nil},
		{"does Basic or Pro include API access?", []string{"only Pro has API access", "There is no API access on Basic."}, nil},
		{"Which has audit logs, Pro or Max?", []string{"only Max has audit logs"}, nil},
		{"Which has access logs, Pro or Max?", []string{"None of Pro and Max clearly fits"}, []string{"only Max"}},
		{"what is the difference between Pro and Max?", []string{"Here is how Pro and Max compare", "webhooks", "audit logs"}, nil},
	} {
		checkComparison(t, tt.q, planResults, tt.want, tt.notWant)
	}
	if _, ok := comparePlans("is Okta or Entra better?", planResults); ok {
		t.Error("comparePlans answered a choice between names that are not plans")
	}
	for _, q := range []string{"Does Pro have webhooks?", "Compare our pricing with Northwind or Globex", "Starter and Team both include Insights."} {
		if asksChoice(q) {
			t.Errorf("asksChoice(%q) = true, want false", q)
		}
	}
}

// TestExtremePlan checks that which plan costs least or most is read
// from the plans' prices, and a plan priced otherwise is named apart.
func TestExtremePlan(t *testing.T) {
	for _, tt := range []struct{ q, kind, want string }{
		{"which plan is cheapest?", "cheap", "Basic is the cheapest plan"},
		{"What's the least expensive tier?", "cheap", "Basic is the cheapest plan"},
		{"What's the most expensive plan?", "dear", "Of the plans priced per seat, Max costs most"},
	} {
		kind := asksExtremePlan(tokens(tt.q))
		if kind != tt.kind {
			t.Errorf("asksExtremePlan(%q) = %q, want %q", tt.q, kind, tt.kind)
			continue
		}
		if got, _ := extremePlan(kind, planResults); !strings.Contains(got, tt.want) {
			t.Errorf("extremePlan for %q lacks %q:\n%s", tt.q, tt.want, got)
		}
	}
	if k := asksExtremePlan(tokens("What is the cheapest way to export data?")); k != "" {
		t.Errorf("asksExtremePlan of a question about no plan = %q", k)
	}
}

// TestSeatTerms checks that the cost of more seats than a plan takes says
// so and prices the cheapest plan with room, over the period asked.
func TestSeatTerms(t *testing.T) {
	rs := append(slices.Clone(planResults), result{source: "calculate", text: "12 * 10 = 120"})
	got, ok := seatCostAnswer("how much is Basic for 12 editors per year?", rs)
	if !ok {
		t.Fatal("seatCostAnswer reported false")
	}
	for _, w := range []string{"Basic is for up to 5, so 12 seats do not fit", "cheapest plan with room for 12 is Pro", "$360 per month", "$4,320 per year"} {
		if !strings.Contains(got, w) {
			t.Errorf("answer lacks %q:\n%s", w, got)
		}
	}
	rs[1] = result{source: "calculate", text: "4 * 10 = 40"}
	if got, _ := seatCostAnswer("how much is Basic for 4 editors?", rs); strings.Contains(got, "do not fit") {
		t.Errorf("4 seats on a plan for up to 5 said not to fit:\n%s", got)
	}
}

// TestSummaryTurns checks that the exchanges of a summary the model wrote
// are read back as user and assistant lines, where the summary was.
func TestSummaryTurns(t *testing.T) {
	sum := summarizeConversation("Current summary: (none yet)\nNew messages:\nuser: How much does the \"Team\" plan cost?\nassistant: Team costs $49. More text.\nuser: thanks\nassistant: You're welcome!\nUpdated summary:")
	conv := "Summary of earlier messages: " + sum + "\nuser: What is 2+2?\nassistant: 4"
	want := "user: How much does the \"Team\" plan cost?\nassistant: Team costs $49.\nuser: thanks\nassistant: You're welcome!\nuser: What is 2+2?\nassistant: 4"
	if got := withSummaryTurns(conv); got != want {
		t.Errorf("withSummaryTurns =\n%s\nwant\n%s", got, want)
	}
	if c := "Summary of earlier messages: we talked about plans.\nuser: hi"; withSummaryTurns(c) != c {
		t.Errorf("a summary in other words was changed: %q", withSummaryTurns(c))
	}
	if got := previousQuestion(withSummaryTurns("Summary of earlier messages: "+sum), "no, I meant Business"); got != "thanks" {
		t.Errorf("previousQuestion after the summary = %q, want the last user message", got)
	}
	if got := corrected("no, I meant Business", withSummaryTurns("Summary of earlier messages: "+sum)); got != `How much does the "Business" plan cost?` {
		t.Errorf("corrected after the summary = %q", got)
	}
}

// TestCorrectable checks which earlier message a correction corrects:
// not a greeting or thanks, and the latest with what it replaces.
func TestCorrectable(t *testing.T) {
	conv := "user: What is the SLA on Enterprise?\nassistant: 99.95%\nuser: What is 2+2?\nassistant: 4\nuser: Hello\nassistant: Hi!"
	if got := corrected("sorry, I meant Business", conv); got != "What is the SLA on Business?" {
		t.Errorf("a name correction = %q, want the question with a name", got)
	}
	if got := corrected("sorry, I meant 3+3", conv); got != "3+3" {
		t.Errorf("a whole new calculation = %q", got)
	}
	if got := corrected("no, I meant 5", conv); got != "What is 5+2?" {
		t.Errorf("a number correction = %q, want the question with a number", got)
	}
}

// TestHyphenatedWords checks that a hyphenated word matches a passage
// that writes it whole, split or hyphenated, and that on-prem and
// self-hosted find on-premises.
func TestHyphenatedWords(t *testing.T) {
	for _, tt := range []struct {
		q, passage string
		want       bool
	}{
		{"can dashboards be sent by e-mail?", "Reports are delivered by email.", true},
		{"can reports be sent by email?", "Reports are delivered by e-mail.", true},
		{"is there an on-prem version?", "Is there an on-premises version? No.", true},
		{"can we self-host it?", "Is there an on-premises version? No.", true},
		{"is a self-hosted deployment possible?", "No on-premises version exists.", true},
		{"do you support sign-in with Okta?", "Sign in with Okta works.", true},
		{"is there an on-prem version?", "Self-paced courses are free.", false},
	} {
		toks := tokens(tt.passage)
		got := true
		for _, w := range contentWords(tt.q) {
			if (strings.Contains(w, "prem") || strings.Contains(w, "self") || strings.Contains(w, "mail") || strings.Contains(w, "sign")) && !matches(w, toks) {
				got = false
			}
		}
		if got != tt.want {
			t.Errorf("%q against %q: matched %v, want %v (words %q)", tt.q, tt.passage, got, tt.want, contentWords(tt.q))
		}
	}
	if q := searchQuery("is there an on-prem version?"); !strings.Contains(q, "on-premises") {
		t.Errorf("searchQuery of on-prem = %q, want on-premises searched too", q)
	}
}

// TestQuantities checks that a number and its unit match however they
// are written.
func TestQuantities(t *testing.T) {
	asked := quantities("is support answered within 4 hours?")
	for _, s := range []string{"priority support with a 4-hour response target", "4 hours on Business", "a four-hour target"} {
		if !sharesQuantity(s, asked) {
			t.Errorf("%q does not share 4 hours", s)
		}
	}
	for _, s := range []string{"within two hours", "every 4 minutes", "no numbers here"} {
		if sharesQuantity(s, asked) {
			t.Errorf("%q shares 4 hours", s)
		}
	}
	if !sharesQuantity("within two business days", quantities("in 2 business days?")) {
		t.Error("two business days does not match 2 business days")
	}
	rs := []result{{source: "search_knowledge", text: "[1] support § Targets (score 1.00)\nWe answer within two hours on Team. We answer within 4 hours on Business.\n"}}
	if got := composeFor("what is answered within 4 hours?", rs, about{style: "concise"}); !strings.HasPrefix(got, "We answer within 4 hours") {
		t.Errorf("the sentence with the quantity asked is not first: %q", got)
	}
}

// TestOneSlip checks the typing slips a word may have and still match.
func TestOneSlip(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"buisness", "business", true},
		{"pricng", "pricing", true},
		{"bussiness", "business", true},
		{"teams", "terms", false},
		{"sales", "scales", false},
		{"business", "business", false},
		{"abcdef", "fedcba", false},
	} {
		if got := oneSlip(tt.a, tt.b); got != tt.want {
			t.Errorf("oneSlip(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestAskedNoun checks that a passage must name what a what or which
// question asks for.
func TestAskedNoun(t *testing.T) {
	for q, want := range map[string]string{
		"What languages does the dashboard UI support?": "languages",
		"Which kind of reports can I schedule?":         "reports",
		"which plan is best?":                           "",
		"What happens when I hit the limit?":            "",
		"how many dashboards can I have?":               "dashboards",
	} {
		if got := askedNoun(q); got != want {
			t.Errorf("askedNoun(%q) = %q, want %q", q, got, want)
		}
	}
	rs := []result{{source: "search_knowledge", text: "[1] pricing § Team (score 1.00)\nIt includes dashboards and email support.\n"}}
	if relevant("What languages does the dashboard UI support?", rs) {
		t.Error("a passage without languages answers which languages")
	}
}

// checkComparison checks that q asks for a choice between plans, and that
// comparePlans answers it from rs with every string of want and none of
// notWant.
func checkComparison(t *testing.T, q string, rs []result, want, notWant []string) {
	t.Helper()
	if !asksChoice(q) {
		t.Errorf("asksChoice(%q) = false", q)
		return
	}
	got, ok := comparePlans(q, rs)
	if !ok {
		t.Errorf("comparePlans(%q) reported false", q)
		return
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("comparePlans(%q) lacks %q:\n%s", q, w, got)
		}
	}
	for _, w := range notWant {
		if strings.Contains(got, w) {
			t.Errorf("comparePlans(%q) has %q:\n%s", q, w, got)
		}
	}
}

// TestOwnServers checks that running a thing on one's own servers is
// self-hosting it, and that a server or a host alone is not.
func TestOwnServers(t *testing.T) {
	for _, c := range []struct {
		q    string
		want bool
	}{
		{"Can we host Acme on our own servers?", true},
		{"Can I run Acme on my own server?", true},
		{"Is it possible to install it on our own hardware?", true},
		{"Do you support SQL Server?", false},
		{"Which cloud hosts the servers?", false},
	} {
		if got := slices.ContainsFunc(contentWords(c.q), func(w string) bool { return inGroup(w, []string{"selfhos"}) }); got != c.want {
			t.Errorf("%q self-hosting %v, want %v (%v)", c.q, got, c.want, contentWords(c.q))
		}
	}
}
