package offline

import (
	"strings"
	"testing"
)

// TestRelatedWordsCoverage checks how the words WordNet relates to a
// question word one step away, and the one word a phrase of two stands
// for, count where a passage's coverage of the question is weighed: a
// related word ("folks" of "people") for part of the word, so that with
// the question's other words it answers, but not with one other word
// alone ("level", of "floors", beside "builds" of "building"); a phrase's word
// ("price reduction" of "discount") whole, also in the heading a
// sentence is under.
func TestRelatedWordsCoverage(t *testing.T) {
	res := func(where, text string) []result {
		return []result{{source: "search_knowledge", text: "2 passages, best first:\n\n[1] " + where + " (score 3.00)\n" + text + "\n"}}
	}
	for _, c := range []struct {
		q, where, text string
		relevant       bool
	}{
		{"How many folks can attend a live training session?", "onboarding § Training",
			"Live training sessions for up to 20 people are included in Business.", true},
		{"Is there a price reduction for charities?", "pricing § Discounts and trials",
			"Every plan starts with a free trial. Non-profits get 40% off Team.", true},
		{"How many floors does the Singapore building have?", "company-overview",
			"Acme builds dashboards for every level of a business.", false},
	} {
		if got := relevant(c.q, res(c.where, c.text)); got != c.relevant {
			cov, n := passageCover(c.q, res(c.where, c.text))
			t.Errorf("relevant(%q) = %v, want %v (cover %.2f of %.1f words)", c.q, got, c.relevant, cov, n)
		}
	}
	q := "Is there a price reduction for charities?"
	rs := res("pricing § Discounts and trials", "Every plan starts with a 14-day free trial with no credit card. "+
		"Non-profits and schools get 40% off Team and Business. Annual contracts of 100 or more editors receive volume discounts; contact sales.")
	rs[0].text += "\n[2] pricing § Enterprise (score 2.00)\nEnterprise pricing is custom and usually starts at $30,000 per year.\n" +
		"\n[3] pricing (score 1.00)\nAll prices are in US dollars per editor seat per month, billed annually. Monthly billing costs 20% more. Viewers are always free and unlimited.\n"
	if got := composeFor(q, rs, about{}); !strings.Contains(got, "40% off") {
		t.Errorf("the answer to %q lacks the sentence under the Discounts heading:\n%s", q, got)
	}
}

// TestPlaceBySynonym checks that a question names a kind of place by a
// WordNet synonym of a place word ("nation" is "country"), and that a
// synonym that only starts like one ("rest" is "residue", not
// "residency") names none.
func TestPlaceBySynonym(t *testing.T) {
	if !asksCompanyPlace("Which nation is Acme's main office in?") {
		t.Error("asksCompanyPlace(\"Which nation is Acme's main office in?\") = false")
	}
	if asksPlace("What authentication does the REST interface use?") {
		t.Error("asksPlace(\"What authentication does the REST interface use?\") = true: \"rest\" is no place")
	}
}
