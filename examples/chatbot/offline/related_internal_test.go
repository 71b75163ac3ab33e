package offline

import (
	"slices"
	"strings"
	"testing"
)

// TestRelatedWordsCoverage checks how the words WordNet relates to a
// question word one step away, and the one word a phrase of two stands
// for, count where a passage's coverage of the question is weighed: a
// related word ("people" of "folks") for part of the word, and never for
// the question's topic, so that it answers with the question's other
// words only ("level", of "floors", beside "builds" of "building", does
// not); a phrase's word ("discount" of "price reduction") as one word for
// the two, also in the heading a sentence is under.
func TestRelatedWordsCoverage(t *testing.T) {
	res := func(where, text string) []result {
		return []result{{source: "search_knowledge", text: "2 passages, best first:\n\n[1] " + where + " (score 3.00)\n" + text + "\n"}}
	}
	for _, c := range []struct {
		q, where, text string
		relevant       bool
	}{
		{"How many folks can attend a live training session?", "onboarding § Training",
			"Live training sessions for up to 20 people are included in Business.", false},
		{"Is there a price reduction for non-profits?", "pricing § Discounts and trials",
			"Every plan starts with a free trial. Non-profits get 40% off Team.", true},
		// "discount" once for "price reduction": with "pricing" of the
		// heading, 1.5 of 3 words, no answer.
		{"Is there a price reduction for veterans?", "pricing § Discounts and trials",
			"Annual contracts receive volume discounts.", false},
		{"How many floors does the Singapore building have?", "company-overview",
			"Acme builds dashboards for every level of a business.", false},
	} {
		if got := relevant(c.q, res(c.where, c.text)); got != c.relevant {
			cov, n := passageCover(c.q, res(c.where, c.text))
			t.Errorf("relevant(%q) = %v, want %v (cover %.2f of %.1f words)", c.q, got, c.relevant, cov, n)
		}
	}
	q := "Is there a price reduction for non-profits?"
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

// TestRelatedWordIsNoSubject checks that a related word never says what
// a passage is about: "level" of "floors" and "structure" of "building"
// do not cover the topic of "how many floors does the Singapore building
// have?", nor count as covered words, though they count for part of a
// word.
func TestRelatedWordIsNoSubject(t *testing.T) {
	q := "How many floors does the Singapore building have?"
	rs := []result{{source: "search_knowledge", text: "1 passages, best first:\n\n[1] company-overview (score 3.00)\n" +
		"Singapore hosts a data centre on every level of the structure.\n"}}
	if relevant(q, rs) {
		cov, n := passageCover(q, rs)
		t.Errorf("relevant(%q) = true by related words (cover %.2f of %.1f words)", q, cov, n)
	}
	if _, missing := cover(q, rs); !slices.Contains(missing, "floors") || !slices.Contains(missing, "building") {
		t.Errorf("cover(%q) misses %q, want \"floors\" and \"building\" among them", q, missing)
	}
}

// TestOccupantIsNoPlace checks that a word whose synonym only shares a
// place noun's stem asks no place: "occupant" is "resident", no
// "residency", so "how many occupants" keeps "occupants" and "office"
// required.
func TestOccupantIsNoPlace(t *testing.T) {
	q := "How many occupants does the Lisbon office have?"
	if asksPlace(q) {
		t.Errorf("asksPlace(%q) = true: an occupant is no place", q)
	}
	if w := relevanceWords(q); !slices.Contains(w, "occupants") || !slices.Contains(w, "office") {
		t.Errorf("relevanceWords(%q) = %q, want \"occupants\" and \"office\" among them", q, w)
	}
}
