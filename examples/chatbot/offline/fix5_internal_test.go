package offline

import (
	"slices"
	"strings"
	"testing"
)

// TestPlainSpellingLeavesCode checks that texting forms are written out
// only as words of a sentence: code and quoted text stay as written.
func TestPlainSpellingLeavesCode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`print(r"\w+")`, `print(r"\w+")`},
		{`x = u"text"`, `x = u"text"`},
		{`print("u")`, `print("u")`},
		{"run `echo ur name` please", "run `echo ur name` please"},
		{"f(u, r)", "f(u, r)"},
		{"where r ur offices", "where are your offices"},
		{"Where's your HQ?", "Where is your HQ?"},
		{"WHERES the office", "Where is the office"},
		{"R is a language", "R is a language"},
	} {
		if got := plainSpelling(c.in); got != c.want {
			t.Errorf("plainSpelling(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDashJoinsOpener checks that a word joined by a dash to the next is
// not an opener: the dash is a mark only with a space next to it.
func TestDashJoinsOpener(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Right-to-left scripts supported?", "Right-to-left scripts supported?"},
		{"So-called viewers, are they free?", "So-called viewers, are they free?"},
		{"Well-known integrations?", "Well-known integrations?"},
		{"One more thing - is there an API?", "is there an API?"},
		{"One more thing -- is there an API?", "is there an API?"},
		{"Right - is there an API?", "is there an API?"},
	} {
		if got := withoutGreeting(c.in); got != c.want {
			t.Errorf("withoutGreeting(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMembersAsPhrases checks that a product named by an ordinary word
// names its category only with the word that makes it the product.
func TestMembersAsPhrases(t *testing.T) {
	for _, c := range []struct {
		token, text string
		want        bool
	}{
		{"chatapp", "so most teams see their own data within an hour", false},
		{"chatapp", "Reports can be delivered by email, Slack and Microsoft Teams.", true},
		{"chatapp", "Post a summary to Microsoft Teams", true},
		{"adplatform", "We never show ads to your viewers.", false},
		{"adplatform", "Connect Google Ads and LinkedIn Ads.", true},
		{"crm", "The dynamics of a growing team change quickly.", false},
		{"crm", "Sync accounts from Microsoft Dynamics.", true},
		{"objectstorage", "The blob of JSON is stored as is.", false},
		{"objectstorage", "Export to S3 or Azure Blob.", true},
	} {
		if got := namesMember(c.token, tokens(c.text)); got != c.want {
			t.Errorf("namesMember(%q, %q) = %v, want %v", c.token, c.text, got, c.want)
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

// TestCoveredTopicsJSON checks that topics listed as a JSON list are
// read back whole, commas and full stops in them included.
func TestCoveredTopicsJSON(t *testing.T) {
	tools := []tool{{name: "search_knowledge", description: `Search the knowledge base. The documents cover: ["returns, refunds and credits", "shipping. Rates and times", "gift cards"]. Ask in English.`}}
	if got, want := coveredTopics(tools), []string{"returns, refunds and credits", "shipping. Rates and times", "gift cards"}; !slices.Equal(got, want) {
		t.Errorf("coveredTopics = %q, want %q", got, want)
	}
}

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
