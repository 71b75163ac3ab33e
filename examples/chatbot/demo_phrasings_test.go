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
// its floor: 9 of 32 passed before the rules for these classes, 32 of 32
// after. The list was run while the rules were written, so it no longer
// measures them afresh; gaps5Fresh does. The floor is its pass rate, so
// that no case of it regresses unnoticed.
func TestDemoGaps5HeldOut(t *testing.T) {
	if rate := runDemoCases(t, gaps5HeldOut, false); rate < 1 {
		t.Errorf("held-out pass rate %.0f%%, want 100%%", rate*100)
	}
}

// gaps5Dev are the questions that showed the classes; each must pass.
var gaps5Dev = []demoCase{
	{kind: "list", say: "Which packages can I buy?", lead: "Starter, Team, Business"},
	{kind: "list", say: "what subscription tiers exist", lead: "Starter, Team, Business"},
	{kind: "opener", say: "Quick question: is there an API?", want: []string{"REST API"}},
	{kind: "own", say: "Do viewers cost anything?", lead: "free"},
	{kind: "residency", say: "Where are your servers located?", lead: "Frankfurt"},
	{kind: "residency", say: "Can I choose where my data lives?", lead: "region chosen at sign-up"},
	{kind: "office", say: "Where is Acme headquartered?", lead: "Lisbon"},
	{kind: "office", say: "where r ur offices", lead: "Lisbon"},
	{kind: "category", say: "Do you integrate with a CRM?", want: []string{"Salesforce", "HubSpot"}},
	// Selling or having one is not integrating with one.
	{kind: "category", say: "Do you sell a CRM?", want: notInDocuments, notWant: []string{"Here is what I found"}},
}

// TestDemoGaps5Dev checks the questions that showed the classes.
func TestDemoGaps5Dev(t *testing.T) {
	runDemoCases(t, gaps5Dev, true)
}

// gaps5Fresh are a second held-out list of the same classes, written
// once the rules were done and run only after them.
var gaps5Fresh = []demoCase{
	{kind: "list", say: "Which plan levels can we subscribe to?", lead: "Starter, Team, Business"},
	{kind: "list", say: "What editions exist?", lead: "Starter, Team, Business"},
	{kind: "list", say: "which pricing packages do you have", lead: "Starter, Team, Business"},

	{kind: "opener", say: "By the way, do you offer a free trial?", want: []string{"14-day"}},
	{kind: "opener", say: "Another question: what is the Enterprise uptime SLA?", want: []string{"99.95%"}},
	{kind: "opener", say: "ok so how long are audit logs kept", want: []string{"one year"}},

	{kind: "own", say: "Are there extra fees for viewers?", lead: "free"},
	{kind: "own", say: "Do viewers need to be paid for?", lead: "free"},
	{kind: "own", say: "What is the price of a viewer seat?", lead: "free"},

	{kind: "residency", say: "Which regions can I keep my data in?", want: []string{"Frankfurt"}},
	{kind: "residency", say: "Can we select the country our data stays in?", want: []string{"region chosen at sign-up"}},
	{kind: "residency", say: "Where do your servers live?", lead: "Frankfurt"},

	{kind: "office", say: "Which city are you based in?", want: []string{"Lisbon"}},
	{kind: "office", say: "where is ur headquarters", want: []string{"Lisbon"}},
	{kind: "office", say: "Where are Acme's offices?", want: []string{"Lisbon"}},

	{kind: "texting", say: "r viewers free on every plan", want: []string{"free"}},
	{kind: "texting", say: "how much is the team plan pls", want: []string{"$49"}},
	{kind: "texting", say: "do u support saml", want: []string{"SAML"}},

	{kind: "category", say: "Does Acme work with our CRM system?", want: []string{"Salesforce"}},
	{kind: "category", say: "Can dashboards go to our messaging app?", want: []string{"Slack"}},
	{kind: "category", say: "Can I sync tickets from our help desk?", want: []string{"Zendesk"}},
	{kind: "category", say: "Do you connect to ecommerce platforms?", want: []string{"Shopify"}},

	{kind: "topics", say: "Do you sell office furniture?", want: []string{"pricing and plans", "support policy"}, notWant: []string{"Here is what I found"}},
	{kind: "topics", say: "What is your parental leave policy?", want: []string{"pricing and plans", "support policy"}, notWant: []string{"Here is what I found"}},
}

// TestDemoGaps5Fresh reports the second held-out list's pass rate and
// fails under its floor: 9 of 24 passed before the rules (main at
// d03ef0e), 22 of 24 when it was first run after them. The two
// that failed ask with words the passage does not hold beside the one it
// matches ("extra fees for viewers", "sync tickets from our help desk"),
// so no passage holds half of the question's words; they are left as
// they are, so that this list keeps measuring the rules afresh.
func TestDemoGaps5Fresh(t *testing.T) {
	if rate := runDemoCases(t, gaps5Fresh, false); rate < 0.9 {
		t.Errorf("held-out pass rate %.0f%%, want at least 90%%", rate*100)
	}
}
