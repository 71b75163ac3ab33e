package offline

import (
	"slices"
	"testing"
)

// TestNamesSkipSentenceStarts checks that a capitalised word that opens a
// sentence, or a correction, is no name.
func TestNamesSkipSentenceStarts(t *testing.T) {
	for s, want := range map[string][]string{
		"Thanks. How much is the Team plan?":           {"Team"},
		"Hi! What does Starter cost? And Team?":        {"Starter", "Team"},
		"x Actually the Business plan":                 {"Business"},
		"Is Forecast in Business? Sorry, Team.":        {"Forecast", "Business", "Team"},
		"What is the SLA on Enterprise":                {"SLA", "Enterprise"},
		"Compare Business vs. Enterprise please":       {"Business", "Enterprise"},
		"A plan, e.g. Team or Starter":                 {"Team", "Starter"},
		"Is data kept in the US region?":               {"US"},
		"What changed in May for Team?":                {"May", "Team"},
		"Is it Starter? The Team plan, I mean.":        {"Starter", "Team"},
		"Is it in Team? And what about the us? Maybe.": {"Team"},
	} {
		if got := namesIn(s); !slices.Equal(got, want) {
			t.Errorf("namesIn(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestListNounNotVerb checks that a noun and a plural after it are read
// as one list noun only when the plural names a list or a choice.
func TestListNounNotVerb(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"Which tier offers SAML, and are there discounts?", ""},
		{"Which plan supports SCIM and do you have a trial?", ""},
		{"What edition gives me audit logs, and which can I buy?", ""},
		{"what subscription tiers exist", "tier"},
		{"Which subscription options exist?", "subscription"},
		{"Which pricing packages do you have?", "package"},
	} {
		if got := askedList(tokens(c.q)); got != c.want {
			t.Errorf("askedList(%q) = %q, want %q", c.q, got, c.want)
		}
	}
}

// TestChartTitle checks that a chart is titled by what it shows, not by
// its first label.
func TestChartTitle(t *testing.T) {
	for q, want := range map[string]string{
		"Make a bar chart of Starter 19, Team 49, Business 89":   "Starter, Team and Business",
		"Plot Q1 10, Q2 12, Q3 15":                               "Q1, Q2 and Q3",
		"Chart revenue by quarter: Q1 10, Q2 12":                 "Revenue",
		"Draw a pie chart of signups: web 40, mobile 35, api 25": "Signups",
	} {
		args := chartArgs(q, tokens(q))
		if args == nil || args["title"] != want {
			t.Errorf("chartArgs(%q) title = %v, want %q", q, args["title"], want)
		}
	}
}

// TestCoveredTopicsJSON checks that topics listed as a JSON list are
// read back whole, commas and full stops in them included.
func TestCoveredTopicsJSON(t *testing.T) {
	tools := []tool{{name: "search_knowledge", description: `Search the knowledge base. The documents cover: ["returns, refunds and credits", "shipping. Rates and times", "gift cards"]. Ask in English.`}}
	if got, want := coveredTopics(tools), []string{"returns, refunds and credits", "shipping. Rates and times", "gift cards"}; !slices.Equal(got, want) {
		t.Errorf("coveredTopics = %q, want %q", got, want)
	}
}
