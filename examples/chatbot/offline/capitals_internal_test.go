package offline

import "testing"

// capitalsResults are search results on plan prices and what each plan
// includes.
var capitalsResults = []result{{source: "search_knowledge", text: `3 passages for "capitals", best first:

[1] pricing § Team (score 3.00)
Team costs $29 per editor per month and includes scheduled reports and shared dashboards.

[2] pricing § Business (score 2.00)
Business costs $89 per editor per month. It adds single sign-on (SAML and OIDC) and audit logs.

[3] security § Access (score 1.00)
Audit logs record every sign-in and every change to a dashboard for one year.
`}}

// TestCapitalsNameNothing checks that capitals which name no thing do
// not make a question unanswered: a question typed in capitals, a word
// written in capitals for emphasis, a currency code (an amount of money)
// and a chat wrapper; an initialism the results do not hold still does.
func TestCapitalsNameNothing(t *testing.T) {
	for _, tt := range []struct {
		q, want string // want "" asks for no answer
	}{
		{"WHAT IS THE PRICE OF THE TEAM PLAN PER EDITOR?", "$29"},
		{"Does Business REALLY include audit logs?", "audit logs"},
		{"What EXACTLY do audit logs record?", "sign-in"},
		{"What does Business cost per editor in USD?", "$89"},
		{"I need the Business price per editor ASAP.", "$89"},
		// An initialism that names a thing the results do not hold.
		{"What does the Acme HRM cost per editor per month?", ""},
		{"What does the Acme ERP cost per editor in USD?", ""},
	} {
		checkAnswer(t, tt.q, capitalsResults, tt.want)
	}
}
