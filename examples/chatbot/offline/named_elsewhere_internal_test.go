package offline

import "testing"

// elsewhereResults are search results that name other companies and
// products beside our own facts: a competitor's prices next to our
// uptime, a partner warehouse listed among the sources we count.
var elsewhereResults = []result{{source: "search_knowledge", text: `4 passages for "elsewhere", best first:

[1] sla § Uptime commitment (score 3.00)
Business customers are covered by a 99.9% monthly uptime commitment and Enterprise customers by 99.95%.

[2] competitor-comparison § Northwind Metrics (score 2.00)
Northwind Metrics is our most frequent competitor in retail. Its Pro plan lists at $70 per user per month and charges for every user, including viewers.

[3] products § Acme Pipelines (score 1.50)
Acme Pipelines copies data from more than 120 sources into the Acme warehouse or into the customer's own Snowflake, BigQuery or Redshift.

[4] pricing § Business (score 1.00)
Business costs $89 per editor per month. It adds unlimited data sources, single sign-on (SAML and OIDC) and audit logs.
`}}

// TestNamedElsewhereNotAnswered checks that a question about a thing
// that is no name of the documents' own (a competitor, a partner) is
// answered only by a sentence that names it and holds what is asked of
// it: our own uptime is no competitor's, and a count of our sources that
// lists a partner counts nothing of the partner's.
func TestNamedElsewhereNotAnswered(t *testing.T) {
	for _, tt := range []struct {
		q, want string // want "" asks for no answer
	}{
		{"Which uptime commitment does Northwind Metrics offer?", ""},
		{"How many warehouses does BigQuery operate?", ""},
		// Named with what is asked of it, or our own: answered.
		{"What does the Northwind Pro plan cost per user?", "$70"},
		{"What uptime commitment covers Business customers?", "99.9%"},
	} {
		checkAnswer(t, tt.q, elsewhereResults, tt.want)
	}
}

// TestInitialismAbsentNotAnswered checks that a question naming a thing
// by an initialism the results do not hold, as a word or by the initials
// of their words, is not answered from the passages its other words
// match; one the results spell out ("SSO" of "single sign-on") is.
func TestInitialismAbsentNotAnswered(t *testing.T) {
	for _, tt := range []struct {
		q, want string // want "" asks for no answer
	}{
		{"What does the Acme LMS cost per editor per month?", ""},
		{"Which uptime commitment covers the BPM suite?", ""},
		{"How much per editor per month is Business with SSO?", "$89"},
	} {
		checkAnswer(t, tt.q, elsewhereResults, tt.want)
	}
}
