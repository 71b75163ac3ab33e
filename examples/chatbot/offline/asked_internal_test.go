package offline

import (
	"slices"
	"strings"
	"testing"
)

// askedResults are search results of the kind a question about a named
// thing gets back: passages about a competitor without a year, the
// company's prices, its payment terms and its founding.
var askedResults = []result{{source: "search_knowledge", text: `5 passages for "asked", best first:

[1] competitor-comparison § Globex BI (score 3.00)
Globex BI targets large enterprises. It sells capacity rather than seats, starting at about $5,000 per month for its smallest capacity unit, with a 12-month minimum term. Globex is strong in governance features.

[2] pricing § Team (score 2.00)
Team costs $49 per editor per month with no editor limit. Acme Forecast is a $15 per editor add-on.

[3] faq § What payment methods are accepted? (score 1.50)
Credit cards on all plans, and invoices with 30-day payment terms on annual contracts above $10,000.

[4] products § Acme Pipelines (score 1.20)
Acme Pipelines copies data from more than 120 sources (PostgreSQL, Salesforce, Stripe) into the Acme warehouse or into the customer's own Snowflake, BigQuery or Redshift.

[5] company-overview § Who we are (score 1.00)
Acme Analytics was founded in 2019 in Lisbon and has about 140 employees in Lisbon, Toronto and Singapore.
`}}

// TestAskedValueOfNamedThing checks that a question asking a kind of
// value (a year, a price, a count, a place) about a thing it names is
// answered only by a sentence that both names that thing and gives a
// value of that kind: passages about the thing with no such value, or
// values of other things, are no answer, and the model says it found
// nothing rather than quote them.
func TestAskedValueOfNamedThing(t *testing.T) {
	for _, tt := range []struct {
		q, want string // want "" asks for no answer
	}{
		// The thing is named, the kind of value asked is not there.
		{"When was Globex BI founded?", ""},
		{"Which city is Globex BI headquartered in?", ""},
		{"How many employees does Globex BI have?", ""},
		// A value of the kind is there, but of another thing.
		{"How many sources does Fivetran copy data from?", ""},
		{"What does Salesforce charge per month for the Pipelines sources?", ""},
		{"How much does Snowflake charge per credit?", ""},
		{"What year was the Singapore office established?", ""},
		{"When did Acme open its Toronto office?", ""},
		{"What is the price of Acme Chat?", ""},
		// A kind of amount the sentences do not name ("revenue").
		{"What is Acme's annual revenue?", ""},
		// Both there: answered.
		{"What does Globex BI cost?", "$5,000"},
		{"How much does the Team plan cost?", "$49"},
		{"When was Acme founded?", "2019"},
		{"How many staff does Acme employ?", "140 employees"},
	} {
		checkAnswer(t, tt.q, askedResults, tt.want)
	}
}

// TestNamedThingAbsent checks that a question naming a thing no sentence
// of the results names is not answered from passages that share its other
// words, whatever it asks.
func TestNamedThingAbsent(t *testing.T) {
	for _, tt := range []struct {
		q, want string // want "" asks for no answer
	}{
		{"Does Acme Chat support capacity units for large enterprises?", ""},
		{"Does Fabrikam sell capacity rather than seats?", ""},
		{"Does Tableau target large enterprises?", ""},
		{"Does Fivetran copy data from PostgreSQL and Salesforce?", ""},
		{"Does Globex BI sell capacity for large enterprises?", "capacity"},
	} {
		checkAnswer(t, tt.q, askedResults, tt.want)
	}
}

// TestValueAsked checks the kind of value read from a question's form.
func TestValueAsked(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want valueKind
	}{
		{"When was the firm set up?", valueYear},
		{"When did Acme open its Toronto office?", valueYear},
		{"When does a downgrade take effect?", valueNone},
		{"How many offices does Initech have?", valueCount},
		{"What does the Team plan cost?", valueMoney},
		{"How much is the fee for extra storage?", valueMoney},
		{"Is there a charge for viewers?", valueNone},
		{"What percentage of customers are in retail?", valuePercent},
		{"How long is a demo?", valueDuration},
		{"Which city is Northwind headquartered in?", valuePlace},
		{"What does Acme Insights do?", valueNone},
	} {
		if got := valueAsked(tt.q); got != tt.want {
			t.Errorf("valueAsked(%q) = %d, want %d", tt.q, got, tt.want)
		}
	}
}

// TestNamedThings checks which words of a question name a thing: those
// written with a capital but its first, and competitors however written;
// never the company's own name.
func TestNamedThings(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want []string
	}{
		{"When was Globex BI founded?", []string{"globex"}},
		{"What is the price of Acme Chat?", []string{"chat"}},
		{"WHERE'S your HQ?", nil},
		{"What do Pipelines and Forecast cost?", []string{"pipelines", "forecast"}},
		{"what does northwind's pro plan cost?", []string{"northwind"}},
		{"How much is Acme Analytics' Team plan?", []string{"team"}},
		{"Hi. Where is Acme based?", nil},
		{"How much is the Business Plus plan?", []string{"business plus"}},
		{"what is the price of acme chat?", []string{"chat"}},
		{"how much is the business plan?", []string{"business"}},
		{"When did Acme begin?", nil},
		{"How long does an Acme deployment usually take?", nil},
	} {
		got := namedThings(tt.q)
		if len(got) != len(tt.want) {
			t.Errorf("namedThings(%q) = %v, want %v", tt.q, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("namedThings(%q) = %v, want %v", tt.q, got, tt.want)
			}
		}
	}
}

// seatResults are the passages the knowledge base gives back for "how much
// do I pay for a Business seat each month?": the general price note, a
// competitor's price, the plan named beside other things, and the free
// viewers; not the plan's own price.
var seatResults = []result{{source: "search_knowledge", text: `4 passages for "pay business seat each month", best first:

[1] pricing (score 5.36)
Acme Analytics has four pricing tiers: Starter, Team, Business and Enterprise. All prices are in US dollars per editor seat per month, billed annually. Monthly billing costs 20% more. Viewers are always free and unlimited.

[2] competitor-comparison § Globex BI (score 3.71)
Globex BI targets large enterprises. It sells capacity rather than seats, starting at about $5,000 per month for its smallest capacity unit, with a 12-month minimum term.

[3] security § Access control (score 3.15)
Business and Enterprise support single sign-on with SAML 2.0 and OpenID Connect, SCIM user provisioning and enforced multi-factor authentication.

[4] faq § Do viewers need a paid seat? (score 3.15)
No. Only editors, who create or change dashboards, pipelines and forecasts, need a seat. Viewers are free and unlimited on every plan.
`}}

// TestAmountOfNamedThingAbsent checks that an amount asked of a thing the
// question names is not answered by passages that share the question's
// other words ("seat", "month") and give other amounts, when none gives
// that thing's.
func TestAmountOfNamedThingAbsent(t *testing.T) {
	checkAnswer(t, "How much do I pay for a Business seat each month?", seatResults, "")
	checkAnswer(t, "How much do I pay for a Globex BI seat each month?", seatResults, "$5,000")
}

// customerResults are the passages the knowledge base gives back for "how
// many customers does Acme serve?" when it misses the one that counts
// them: other counts ("more than 120 sources", "two onboarding calls")
// beside other words of the question.
var customerResults = []result{{source: "search_knowledge", text: `10 passages for "customers acme serve client", best first:

[1] api-limits § When a limit is reached (score 3.68)
The API answers HTTP 429 with a Retry-After header giving the number of seconds to wait. Clients should back off exponentially and retry. Repeated 429 responses do not lock the account.

[2] integrations § Data sources (score 3.29)
Pipelines connects to more than 120 sources: databases (PostgreSQL, MySQL, SQL Server, MongoDB), warehouses (Snowflake, BigQuery, Redshift, Databricks), SaaS applications (Salesforce, HubSpot, Zendesk, Stripe, Shopify, Google Ads, Meta Ads) and files (CSV and Parquet on S3 or Google Cloud Storage).

[3] support-policy § Channels (score 1.72)
Starter customers get help from the community forum and the documentation. Team customers can email support. Business customers also get live chat during business hours. Enterprise customers get 24/7 phone support and a named customer success manager.

[4] pricing § Enterprise (score 1.53)
Enterprise pricing is custom and usually starts at $30,000 per year. It adds a dedicated cloud region, customer-managed encryption keys, a 99.95% uptime SLA, a named customer success manager and 24/7 phone support.

[5] security § Data residency (score 1.42)
Customer data stays in the region chosen at sign-up: EU (Frankfurt), US (Virginia) or Asia Pacific (Singapore). Enterprise customers can ask for a dedicated single-tenant region.

[6] sla § Uptime commitment (score 1.41)
Business customers are covered by a 99.9% monthly uptime commitment and Enterprise customers by 99.95%. Starter and Team have no contractual SLA, although they run on the same infrastructure.

[7] data-retention § Deletion (score 1.35)
Removing a data source deletes its synced data within 7 days. Closing a workspace deletes all customer data within 30 days, including backups. Customers can export dashboards and data before closing a workspace.

[8] security § Certifications (score 1.32)
Acme Analytics holds a SOC 2 Type II report, renewed every year, and is ISO 27001 certified. Customers can request the SOC 2 report under NDA from their account manager. We are GDPR compliant and sign a data processing agreement with every customer.

[9] onboarding § First two weeks (score 1.31)
Team and Business customers get two onboarding calls with a solutions engineer: a kickoff to agree on the first three dashboards and a review at the end of the second week. Enterprise customers get a dedicated onboarding plan with weekly calls for the first two months.

[10] sla § Status page (score 1.16)
Current status and incident history are published at status.acme.example. Customers can subscribe to incident updates by email or webhook.
`}}

// TestCountOfFocus checks that a count asked is answered only by a count
// of what the question asks about: "more than 120 sources" or "two
// onboarding calls" are no number of customers.
func TestCountOfFocus(t *testing.T) {
	checkAnswer(t, "How many customers does Acme serve?", customerResults, "")
	checkAnswer(t, "How many customers does Acme serve?", overviewResults, "2,300 customers")
}

// TestNarrowSearch checks that when no result gives the kind of value a
// question asks of a thing it names, the supervisor searches the
// knowledge base again for the thing and that kind of value, once, before
// it tries other sources.
func TestNarrowSearch(t *testing.T) {
	q := "How much do I pay for a Business seat each month?"
	tools := []tool{{name: "search_knowledge"}, {name: "web_search"}}
	p := prompt{kind: kindSupervisor, question: q, tools: tools, results: seatResults, iteration: 2, max: 5}
	d := decideWithResults(p, q, false)
	if d.Tool != "search_knowledge" || d.Arguments["query"] != "business price costs" {
		t.Fatalf("decision = %+v, want search_knowledge {query: business price costs}", d)
	}
	// Searched once: the next source is tried.
	p.results = append(slices.Clone(seatResults), result{source: "search_knowledge", text: `1 passages for "business price costs", best first:

[1] security § Access control (score 1.00)
Business and Enterprise support single sign-on with SAML 2.0 and OpenID Connect.
`})
	d = decideWithResults(p, q, false)
	if d.Tool != "web_search" {
		t.Fatalf("decision after the narrow search = %+v, want web_search", d)
	}
	// The narrow search failed (an error, a timeout): it is not repeated,
	// the web is tried next.
	p.results = append(slices.Clone(seatResults), result{source: "search_knowledge", err: "context deadline exceeded"})
	d = decideWithResults(p, q, false)
	if d.Tool != "web_search" {
		t.Fatalf("decision after a failed narrow search = %+v, want web_search", d)
	}
	// A result gives the value asked of the thing named: no narrow search,
	// whatever else keeps the results from answering.
	if query, ok := narrowQuery("How much does the Team plan cost?", askedResults, "search_knowledge"); ok {
		t.Errorf("narrowQuery(Team plan cost) = %q, want none: a result gives the Team price", query)
	}
}

// moneyResults are passages whose words hold money words only inside
// other words ("non-profits", "Salesforce") or beside the thing asked
// ("revenue" among Forecast's metrics), and an amount whose kind only its
// heading names ("Funding").
var moneyResults = []result{{source: "search_knowledge", text: `4 passages for "money", best first:

[1] pricing § Discounts and trials (score 3.00)
Non-profits and schools get 40% off Team and Business. Annual contracts of 100 or more editors receive volume discounts; contact sales.

[2] products § Acme Pipelines (score 2.00)
Acme Pipelines copies data from more than 120 sources (PostgreSQL, MySQL, Salesforce, HubSpot, Stripe) into the Acme warehouse.

[3] products § Acme Forecast (score 1.50)
Acme Forecast predicts time series such as revenue, demand and churn.

[4] company-overview § Funding (score 1.00)
Acme raised $60 million from two investors.
`}}

// TestMoneyThingAsked checks that a question asks an amount of money only
// when money is the thing asked, by whole words: "non-profits" holds no
// profit, "Salesforce" no sales, and "revenue" beside the metrics asked
// does not ask an amount; and that the kind of amount may be named by
// the passage's heading.
func TestMoneyThingAsked(t *testing.T) {
	for _, tt := range []struct {
		q, want string
	}{
		{"What discount do non-profits get?", "40%"},
		{"What data can Pipelines pull from Salesforce?", "120 sources"},
		{"What time series does Forecast predict besides revenue?", "demand"},
		{"How much funding did Acme raise?", "$60 million"},
	} {
		checkAnswer(t, tt.q, moneyResults, tt.want)
	}
	for _, tt := range []struct {
		q    string
		want valueKind
	}{
		{"What discount do non-profits get?", valueNone},
		{"What data can Pipelines pull from Salesforce?", valueNone},
		{"What metrics can Forecast predict besides revenue?", valueNone},
		{"Which feedback channels are there?", valueNone},
		{"What is Acme's annual revenue?", valueMoney},
		{"What is the price of Acme Chat?", valueMoney},
		{"What does Salesforce charge per month?", valueMoney},
		{"Which fees apply to exports?", valueMoney},
		{"How much funding did Acme raise?", valueMoney},
	} {
		if got := valueAsked(tt.q); got != tt.want {
			t.Errorf("valueAsked(%q) = %d, want %d", tt.q, got, tt.want)
		}
	}
}

// TestPartAskedValue checks that each part of a multi-part message is
// held to what it asks in its own words, which its search query (its
// content words, in lower case) loses: passages about Globex BI with no
// year do not answer "When was Globex BI founded?".
func TestPartAskedValue(t *testing.T) {
	team := result{source: "search_knowledge", text: `1 passages for "team cost", best first:

[1] pricing § Team (score 2.00)
Team costs $49 per editor per month with no editor limit.
`}
	globex := result{source: "search_knowledge", text: `1 passages for "globex bi founded", best first:

[1] competitor-comparison § Globex BI (score 3.00)
Globex BI targets large enterprises. Globex BI was founded by former consultants and is strong in governance features.
`}
	q := "How much does the Team plan cost? When was Globex BI founded?"
	text, ok := multiPartAnswer(q, []result{team, globex}, []tool{{name: "search_knowledge"}}, about{})
	if !ok {
		t.Fatalf("multiPartAnswer(%q) did not answer", q)
	}
	if !strings.Contains(text, "$49") {
		t.Errorf("multiPartAnswer(%q) lacks the Team price:\n%s", q, text)
	}
	if strings.Contains(text, "former consultants") || !strings.Contains(text, "could not find") {
		t.Errorf("multiPartAnswer(%q) answers the founding year from a passage that gives none:\n%s", q, text)
	}
}

// TestWholeNameAsked checks that a name of several words is named only by
// a sentence holding each of them ("Business costs $89" names no
// "Business Plus plan"), and that the documents' names and a product
// after the company's own name are names however written.
func TestWholeNameAsked(t *testing.T) {
	rs := []result{{source: "search_knowledge", text: `2 passages for "price", best first:

[1] pricing § Business (score 2.00)
Business costs $89 per editor per month.

[2] pricing § Starter (score 1.00)
Starter costs $19 per editor per month for up to 5 editors.
`}}
	checkAnswer(t, "How much does the Business Plus plan cost?", rs, "")
	checkAnswer(t, "What is the price of acme chat?", rs, "")
	checkAnswer(t, "How much does the Business plan cost?", rs, "$89")
	checkAnswer(t, "how much does the business plan cost?", rs, "$89")
}

// TestNamedThingsLinear checks that a long message of many names is read
// to at most maxNames of them.
func TestNamedThingsLinear(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		b.WriteString("and Name")
		b.WriteByte(byte('a' + i%26))
		b.WriteByte(byte('a' + i/26%26))
		b.WriteString(", ")
	}
	q := "What is the price of " + b.String() + "?"
	if got := namedThings(q); len(got) > maxNames {
		t.Errorf("namedThings(3000 names) returns %d names, want at most %d", len(got), maxNames)
	}
	toks := tokens(strings.Repeat("how much ", 4000) + "cost")
	if !asksMoney(toks) {
		t.Errorf("asksMoney(how much ... cost) = false, want true")
	}
	if got := testing.AllocsPerRun(1, func() { asksMoney(toks) }); got != 0 {
		t.Errorf("asksMoney allocates %v times", got)
	}
}

// TestCountNotOfName checks that a count asked of a named thing is not
// answered by a number beside the name: the name is no part of what is
// counted.
func TestCountNotOfName(t *testing.T) {
	rs := []result{{source: "search_knowledge", text: `2 passages for "forecast customers", best first:

[1] pricing § Business (score 2.00)
Acme Forecast picks between 3 seasonal models automatically.

[2] company-overview § Who we are (score 1.00)
Acme Analytics serves about 2,300 customers in 40 countries.
`}}
	checkAnswer(t, "How many customers use Forecast?", rs, "")
	if q := "How many customers use Forecast?"; answersAsked(q, rs) {
		t.Errorf("answersAsked(%q) = true, want false: \"3 seasonal models\" beside Forecast counts no customers", q)
	}
	checkAnswer(t, "How many seasonal models does Forecast pick between?", rs, "3 seasonal models")
}

// TestEveryPlanNamesEach checks that a fact stated for every plan answers
// a question that names one plan.
func TestEveryPlanNamesEach(t *testing.T) {
	rs := []result{{source: "search_knowledge", text: `1 passages for "trial", best first:

[1] pricing § Discounts and trials (score 2.00)
Every plan starts with a 14-day free trial with no credit card.
`}}
	checkAnswer(t, "How long is the free trial on the Starter plan?", rs, "14-day")
	if q := "How long is the free trial on the Starter plan?"; !answersAsked(q, rs) {
		t.Errorf("answersAsked(%q) = false, want true: the trial is stated for every plan", q)
	}
}
