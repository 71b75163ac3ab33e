package offline

import (
	"strings"
	"testing"
)

// TestNamesPlaceNotThings checks that a plan, product, competitor or the
// company after "in", "at" or "from" is no place, while a city is.
func TestNamesPlaceNotThings(t *testing.T) {
	rs := []result{{source: "search_knowledge", text: `2 passages for "plans", best first:

[1] pricing § Team (score 3.00)
Team costs $49 per editor per month.

[2] pricing § Business (score 2.90)
Business costs $89 per editor per month.
`}}
	names := thingNames(rs)
	for s, want := range map[string]bool{
		"Audit logs are included in Business.":              false,
		"Pipelines pull data from Salesforce and HubSpot.":  false,
		"Migration help is available at Team and above.":    false,
		"Customers who switch from Northwind keep history.": false,
		"Alerts can post in Slack channels.":                false,
		"Acme has offices in Lisbon and Toronto.":           true,
		"The support team works from Singapore.":            true,
	} {
		if got := namesPlace(s, names); got != want {
			t.Errorf("namesPlace(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestOwnFirstIsNotAbsolute checks that a sentence the competitor words
// mark as about others ("alternatives") still comes first when it
// answers far better than our own, and that our own comes first when it
// answers as well.
func TestOwnFirstIsNotAbsolute(t *testing.T) {
	for _, c := range []struct{ q, text, lead string }{
		{"How long do PDF exports of dashboards take?", `2 passages for "pdf exports dashboards", best first:

[1] products § Sharing (score 2.00)
Viewers can open shared dashboards.

[2] faq § Exports (score 1.00)
Unlike most alternatives, PDF exports of dashboards take under a minute.
`, "under a minute"},
		{"Do viewers cost anything?", `2 passages for "viewers cost", best first:

[1] pricing § Viewers (score 2.00)
Viewers are always free.

[2] competitor-comparison § Northwind (score 1.00)
Northwind charges $5 per viewer per month.
`, "always free"},
	} {
		got := composeFor(c.q, []result{{source: "search_knowledge", text: c.text}}, about{})
		lines := strings.Split(got, "\n")
		first := ""
		for _, l := range lines {
			if strings.HasPrefix(l, "- ") {
				first = l
				break
			}
		}
		if !strings.Contains(first, c.lead) {
			t.Errorf("composeFor(%q) leads with %q, want %q in it:\n%s", c.q, first, c.lead, got)
		}
	}
}
