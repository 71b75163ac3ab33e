package offline

import (
	"slices"
	"testing"
)

func TestWithoutOpener(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Quick question: is there an API?", "is there an API?"},
		{"btw is there a status page?", "is there a status page?"},
		{"One more thing - do you support SAML?", "do you support SAML?"},
		{"So, what does Team cost?", "what does Team cost?"},
		{"so what does Team cost?", "what does Team cost?"},
		{"I was wondering if you have an API", "you have an API"},
		{"Okay, one last thing - how long are backups kept?", "how long are backups kept?"},
		// Not openers: the word is the question's, or nothing follows.
		{"So?", "So?"},
		{"Quick question", "Quick question"},
		{"so many dashboards, is that a limit?", "so many dashboards, is that a limit?"},
		{"Right to erasure: how is it handled?", "Right to erasure: how is it handled?"},
		{"Also available on Team?", "Also available on Team?"},
	} {
		if got := withoutGreeting(c.in); got != c.want {
			t.Errorf("withoutGreeting(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPlainSpelling(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"where r ur offices", "where are your offices"},
		{"can u tell me the sla pls", "can you tell me the sla please"},
		{"where's ur HQ?", "where is your HQ?"},
		{"thx!", "thanks!"},
		// Upper case, and letters inside words, are left alone.
		{"Do you support R?", "Do you support R?"},
		{"Is U2F supported?", "Is U2F supported?"},
		{"our urgent tickets", "our urgent tickets"},
	} {
		if got := plainSpelling(c.in); got != c.want {
			t.Errorf("plainSpelling(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { plainSpelling("How much does the Team plan cost?") }); allocs != 0 {
		t.Errorf("plainSpelling of a message without texting spellings allocates %v times, want 0", allocs)
	}
}

func TestAskedListNouns(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Which packages can I buy?", "package"},
		{"what subscription tiers exist", "tier"},
		{"Which subscription options exist?", "subscription"},
		{"What tiers can I sign up for?", "tier"},
		{"What plans do you offer?", "plan"},
		{"What is the price of Team?", ""},
		{"Which plan is cheapest?", ""},
	} {
		if got := askedList(tokens(c.in)); got != c.want {
			t.Errorf("askedList(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCategories(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Do you integrate with a CRM?", []string{"integrate", "crm"}},
		{"Can reports go to our team chat app?", []string{"reports", "go", "chatapp"}},
		{"Can I connect a payment processor?", []string{"connect", "paymentprocessor"}},
		{"What payment methods do you accept?", []string{"payment", "methods", "accept"}},
	} {
		if got := contentWords(c.in); !slices.Equal(got, c.want) {
			t.Errorf("contentWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	toks := tokens("SaaS applications (Salesforce, HubSpot, Zendesk, Stripe)")
	for w, want := range map[string]bool{"crm": true, "helpdesk": true, "paymentprocessor": true, "chatapp": false, "payment": false} {
		if got := matches(w, toks); got != want {
			t.Errorf("matches(%q, %q) = %v, want %v", w, toks, got, want)
		}
	}
}

func TestNamesPlace(t *testing.T) {
	for s, want := range map[string]bool{
		"Acme Analytics was founded in 2019 in Lisbon.":  true,
		"Reports are sent from Toronto.":                 true,
		"Escalations are reviewed in March.":             false,
		"Support is open from Monday to Friday.":         false,
		"Dashboards can be shared in the customer's app": false,
	} {
		if got := namesPlace(s, nil); got != want {
			t.Errorf("namesPlace(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestCoveredTopics(t *testing.T) {
	tools := []tool{
		{name: "calculate", description: "Evaluate arithmetic."},
		{name: "search_knowledge", description: "Search the knowledge base. The documents cover: pricing and plans, security and compliance, support policy."},
	}
	if got, want := coveredTopics(tools), []string{"pricing and plans", "security and compliance", "support policy"}; !slices.Equal(got, want) {
		t.Errorf("coveredTopics = %q, want %q", got, want)
	}
	if got := coveredTopics(tools[:1]); got != nil {
		t.Errorf("coveredTopics without a list = %q, want none", got)
	}
}

func TestContainsFold(t *testing.T) {
	for _, c := range []struct {
		s, sub string
		want   bool
	}{
		{"Can we host it on our OWN servers?", "own", true},
		{"get Back to me", "back", true},
		{"How much is Team?", "own", false},
		{"ow", "own", false},
	} {
		if got := containsFold(c.s, c.sub); got != c.want {
			t.Errorf("containsFold(%q, %q) = %v, want %v", c.s, c.sub, got, c.want)
		}
	}
}
