package offline

import "testing"

// nearResults are search results that name other companies and products
// in passing, with what is said of them in the next sentence, and a
// passage about one competitor.
var nearResults = []result{{source: "search_knowledge", text: `3 passages for "near", best first:

[1] integrations § CRM connectors (score 3.00)
Acme Pipelines copies deals and contacts from HubSpot. It syncs them every 15 minutes.

[2] competitor-comparison § Globex Insight (score 2.00)
Globex Insight sells mostly to manufacturers. Its Standard plan lists at $55 per user per month.

[3] sla § Uptime commitment (score 1.00)
Business customers are covered by a 99.9% monthly uptime commitment.
`}}

// TestNamedNearAnswered checks that a thing that is no name of the
// documents' own is answered where the results speak of it: by the
// sentence beside the one that names it in passing, or by the passage
// about it; not by a passage about something else.
func TestNamedNearAnswered(t *testing.T) {
	for _, tt := range []struct {
		q, want string // want "" asks for no answer
	}{
		{"How often does Pipelines sync HubSpot data?", "15 minutes"},
		{"What does the Globex Insight Standard plan cost per user?", "$55"},
		{"Which uptime commitment does Globex Insight give?", ""},
	} {
		checkAnswer(t, tt.q, nearResults, tt.want)
	}
}

// TestOneOfNamedPriced checks that a value asked of several things that
// are no names of the documents' own is answered by that of one, as for
// the documents' own names: the answer says what it found.
func TestOneOfNamedPriced(t *testing.T) {
	checkAnswer(t, "What do Globex Insight and Initech Cloud charge per user?", nearResults, "$55")
	checkAnswer(t, "What do Initech Cloud and Hooli Data charge per user?", nearResults, "")
}
