package offline

import "testing"

// recallResults are search results that answer questions asked in other
// words than theirs.
var recallResults = []result{{source: "search_knowledge", text: `3 passages for "recall", best first:

[1] support-policy § Channels (score 3.00)
Starter customers get help from the community forum and the documentation. Team customers can email support. Business customers also get live chat during business hours.

[2] company-overview § Who we are (score 2.00)
Acme Analytics was founded in 2019 in Lisbon and has about 140 employees in Lisbon, Toronto and Singapore.

[3] security § Certifications (score 1.00)
Acme Analytics holds a SOC 2 Type II report, renewed every year, and is ISO 27001 certified.
`}}

// TestKindNounAsksTheThing checks that a noun WordNet gives as a
// synonym of "kind" before "of" ("forms of support") asks for the thing
// after it, as "kind of" does: the passage need not hold the noun.
func TestKindNounAsksTheThing(t *testing.T) {
	for _, tt := range []struct{ q, want string }{
		{"What forms of help do Business customers get?", "live chat"},
		{"What kinds of help do Business customers get?", "live chat"},
	} {
		checkAnswer(t, tt.q, recallResults, tt.want)
	}
}

// TestYearAskedByItsMeasure checks that the measure a question asks a
// year by ("which year") is the kind of value asked, not the subject a
// year must be of: the founding year answers it.
func TestYearAskedByItsMeasure(t *testing.T) {
	checkAnswer(t, "Which year did the company get started?", recallResults, "2019")
	checkAnswer(t, "In which year was the Toronto office opened?", recallResults, "")
}

// TestDeeperCountSearch checks that a count asked of a noun the results
// mention but do not count is searched again, deeper, with the nouns a
// count of which counts it; not when the results count it, name nothing
// of it, or the question names the thing it counts of.
func TestDeeperCountSearch(t *testing.T) {
	mention := []result{{source: "search_knowledge", text: `2 passages for "patrons customer", best first:

[1] support-policy § Channels (score 2.00)
Team customers can email support. Business customers also get live chat during business hours.

[2] sla § Uptime commitment (score 1.00)
Business customers are covered by a 99.9% monthly uptime commitment.
`}}
	counted := []result{{source: "search_knowledge", text: `1 passages for "customers", best first:

[1] company-overview § Who we are (score 2.00)
Around 2,300 customers use the platform.
`}}
	unrelated := []result{{source: "search_knowledge", text: `1 passages for "parking", best first:

[1] sla § Status page (score 1.00)
Current status and incident history are published at status.acme.example.
`}}
	q := "How many customers do you serve?"
	p := prompt{kind: kindSupervisor, question: q, tools: []tool{{name: "search_knowledge"}, {name: "web_search"}}, results: mention, iteration: 2, max: 5}
	if d := decideWithResults(p, q, false); d.Tool != "search_knowledge" || d.Arguments["top_k"] != deepTopK {
		t.Fatalf("decision = %+v, want search_knowledge with top_k %d", d, deepTopK)
	}
	for _, c := range []struct {
		q  string
		rs []result
	}{
		{"How many customers do you serve?", counted},
		{"How many parking spaces do you have?", unrelated},
		{"How many customers does Northwind Metrics have?", mention},
	} {
		if q, ok := deeperQuery(c.q, c.rs, "search_knowledge"); ok {
			t.Errorf("deeperQuery(%q) = %q, want none", c.q, q)
		}
	}
}
