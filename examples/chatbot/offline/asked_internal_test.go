package offline

import (
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

// seatResults are passages a question about paying for a plan's seat gets
// back: the general price note, the free viewers, a competitor's price,
// and the plan's own.
var seatResults = []result{{source: "search_knowledge", text: `4 passages for "pay business seat month", best first:

[1] faq § Do viewers need a paid seat? (score 3.00)
No. Only editors, who create or change dashboards, pipelines and forecasts, need a seat. Viewers are free and unlimited on every plan.

[2] pricing (score 2.50)
All prices are in US dollars per editor seat per month, billed annually.

[3] competitor-comparison § Globex BI (score 2.00)
It sells capacity rather than seats, starting at about $5,000 per month for its smallest capacity unit, with a 12-month minimum term.

[4] pricing § Business (score 1.00)
Business costs $89 per editor per month. It adds Acme Forecast, 5-minute syncs and audit logs.
`}}

// TestAmountOfNamedThingQuoted checks that an amount asked of a thing the
// question names is answered with the sentence that gives the amount of
// that thing, not with those that share more of the question's other
// words ("seat", "month") or give another thing's amount.
func TestAmountOfNamedThingQuoted(t *testing.T) {
	q := "How much do I pay for a Business seat each month?"
	text := compose(q, seatResults)
	if !strings.Contains(text, "$89") || strings.Contains(text, "$5,000") {
		t.Errorf("compose(%q) does not quote the price of Business, or quotes another thing's:\n%s", q, text)
	}
}

// TestCountOfFocus checks that a count asked is answered only by a count
// of what the question asks about: "10,000 rows per page" is no number of
// customers.
func TestCountOfFocus(t *testing.T) {
	rs := []result{{source: "search_knowledge", text: `2 passages for "customers serve", best first:

[1] support-policy § Channels (score 3.00)
Enterprise customers get 24/7 phone support and a named customer success manager. Customers can request the SOC 2 report.

[2] api-limits § Query limits (score 2.00)
Result sets for customers are paginated at 10,000 rows per page.
`}}
	checkAnswer(t, "How many customers does Acme serve?", rs, "")
	checkAnswer(t, "How many customers does Acme serve?", overviewResults, "2,300 customers")
}
