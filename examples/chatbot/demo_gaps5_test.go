package chatbot_test

import "testing"

// gaps5HeldOut are questions of six classes the offline demo model got
// wrong, written before the rules for them and in other words than the
// questions that showed the classes, so that their pass rate measures how
// the rules generalise:
//
//   - list: which plans exist, asked with another noun of the list
//     (edition, package, subscription, tier) and another verb of being
//     there (exist, can I buy, can I sign up for);
//   - opener: a question after a conversational opener ("just
//     wondering,", "btw", "one last thing -");
//   - own: a question about us that the competitor notes also match
//     ("what do viewers cost?"), where our own sources come first;
//   - residency and office: where data is kept, asked as a choice or with
//     "data centres", and where the company itself is;
//   - texting: texting spellings (r, ur, u, pls, thx);
//   - category: a category (CRM, chat app, helpdesk, payment processor,
//     online store) that the knowledge names only by its members.
var gaps5HeldOut = []demoCase{
	{kind: "list", say: "Which editions can I purchase?", lead: "Starter, Team, Business"},
	{kind: "list", say: "what packages are there", lead: "Starter, Team, Business"},
	{kind: "list", say: "Which subscription options exist?", lead: "Starter, Team, Business"},
	{kind: "list", say: "What tiers can I sign up for?", lead: "Starter, Team, Business"},

	{kind: "opener", say: "Just wondering, is there an API?", want: []string{"REST API"}},
	{kind: "opener", say: "Hey, quick one: do you have an API?", want: []string{"REST API"}},
	{kind: "opener", say: "Okay, one last thing - how long are backups kept?", want: []string{"30 days"}},
	{kind: "opener", say: "btw what does the Business plan cost", want: []string{"$89"}},

	{kind: "own", say: "How much do read-only viewers cost?", lead: "free"},
	{kind: "own", say: "What do viewers cost on your plans?", lead: "free"},
	{kind: "own", say: "Is there a charge for viewers?", lead: "free"},
	{kind: "own", say: "Do we pay for viewer seats?", lead: "free"},

	{kind: "residency", say: "Can I pick the region where my data is kept?", want: []string{"region chosen at sign-up"}},
	{kind: "residency", say: "Where are your data centres?", want: []string{"Frankfurt"}, notWant: []string{"24/7 phone support"}},
	{kind: "residency", say: "Do I get to decide which region stores our data?", want: []string{"region chosen at sign-up"}},
	{kind: "residency", say: "Which country will my data be stored in?", lead: "Frankfurt"},

	{kind: "office", say: "Where is your company based?", lead: "Lisbon"},
	{kind: "office", say: "In which city is Acme Analytics headquartered?", want: []string{"Lisbon"}},
	{kind: "office", say: "where's ur HQ?", want: []string{"Lisbon"}},
	{kind: "office", say: "Where is your head office?", want: []string{"Lisbon"}},

	{kind: "texting", say: "how long r backups kept", want: []string{"30 days"}},
	{kind: "texting", say: "r there any discounts for schools", want: []string{"40%"}},
	{kind: "texting", say: "can u tell me ur uptime sla pls", want: []string{"99.95"}},
	{kind: "texting", say: "thx! r viewers free?", want: []string{"free"}},

	{kind: "category", say: "Can Acme pull data from our CRM?", want: []string{"Salesforce"}},
	{kind: "category", say: "Can reports be sent to our team chat app?", want: []string{"Slack"}},
	{kind: "category", say: "Does Pipelines connect to our helpdesk software?", want: []string{"Zendesk"}},
	{kind: "category", say: "Can I connect a payment processor?", want: []string{"Stripe"}},
	{kind: "category", say: "Can I load data from our online store?", want: []string{"Shopify"}},

	// What the sources cover is said in their own titles.
	{kind: "topics", say: "What is your policy on bringing pets to the office?", want: []string{"security and compliance", "service level agreement"}, notWant: []string{"Here is what I found"}},
	{kind: "topics", say: "Do you have a Kubernetes operator?", want: []string{"security and compliance", "service level agreement"}, notWant: []string{"Here is what I found"}},
	{kind: "topics", say: "What's the warranty on your hardware appliances?", want: []string{"security and compliance", "service level agreement"}, notWant: []string{"Here is what I found"}},
}

// TestDemoGaps5HeldOut reports the held-out pass rate and fails under
// its floor.
func TestDemoGaps5HeldOut(t *testing.T) {
	if rate := runDemoCases(t, gaps5HeldOut, false); rate < 0 {
		t.Errorf("held-out pass rate %.0f%%, want at least 0%%", rate*100)
	}
}
