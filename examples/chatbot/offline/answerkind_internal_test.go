package offline

import (
	"slices"
	"strings"
	"testing"
)

// TestAskedValueKind checks which questions ask a count or a year: "how many"
// of things but not of hours, "what year", "how old", and "when" of a
// beginning but not of anything else.
func TestAskedValueKind(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want answerKind
	}{
		{"How many businesses use Acme?", kindCount},
		{"How big is Acme's staff?", kindCount},
		{"What's the size of your customer base?", kindCount},
		{"What is the number of employees?", kindCount},
		{"How many hours does support take to reply?", kindNone}, // a duration
		{"How big is the Business plan's query limit?", kindNone},
		{"In what year was Acme established?", kindBegin},
		{"In what year did the SOC 2 report expire?", kindYear},
		// A beginning in a verb WordNet makes a synonym of one, or in
		// a phrase whose one-word synonym is one.
		{"In what year was the company formed?", kindBegin},
		{"When was Acme set up?", kindBegin},
		{"When did the company commence trading?", kindBegin},
		{"When did the firm begin operating?", kindBegin},
		{"When was the bug fixed?", kindNone},
		{"How old is the company?", kindYear},
		{"When did Acme get started?", kindBegin},
		{"When was the business founded?", kindBegin},
		{"When does a downgrade take effect?", kindNone},
		{"What does Team cost?", kindNone},
		// The verb of the when-clause itself, a whole word, of the past.
		{"When does the Starter plan renew?", kindNone},
		{"When does my trial start?", kindNone},
		{"When was the open beta announced?", kindNone},
		{"When can I see what was founded?", kindNone},
		{"When did Acme start?", kindBegin},
		{"When was the bug found?", kindNone},
		// A word or phrase WordNet makes a synonym of "start" in another
		// sense (an outset, a jump) or of one founding lemma only in a
		// rarer sense is no beginning.
		{"When did the app bug out?", kindNone},
		{"When did the screen bulge out?", kindNone},
		{"When was the rule laid down?", kindNone},
		{"When was the kickoff?", kindNone},
		{"When was the company instituted?", kindBegin},
		// "In what year" asks a beginning only of the past, as "when" does.
		{"In what year does my contract start?", kindYear},
		{"In what year will the office be founded?", kindYear},
	} {
		if got := askedKind(tokens(tt.q)); got != tt.want {
			t.Errorf("askedKind(%q) = %d, want %d", tt.q, got, tt.want)
		}
	}
}

// TestGivesKind checks which sentences give the kind of value asked: a
// count of things, not a price, a share, a duration or a year; a year,
// not a version; and the year of a beginning only of what the
// sentence's subject names.
func TestGivesKind(t *testing.T) {
	founded := "Acme Analytics was founded in 2019 in Lisbon and has about 140 employees in Lisbon, Toronto and Singapore."
	for _, tt := range []struct {
		k     answerKind
		s     string
		focus string
		want  bool
		noun  string // the noun a count is asked of
	}{
		{kindCount, "Around 2,300 customers use the platform.", "", true, ""},
		{kindCount, founded, "", true, ""},
		{kindCount, "Team costs $49 per editor per month.", "", false, ""},
		{kindCount, "Non-profits get 40% off.", "", false, ""},
		{kindCount, "First-response targets are 4 hours on Business.", "", false, ""},
		{kindYear, founded, "", true, ""},
		{kindYear, "Forecast explanations arrived in 2026.10.", "", false, ""},
		{kindBegin, founded, "", true, ""},
		{kindBegin, founded, "acme", true, ""},
		{kindBegin, founded, "toronto office", false, ""}, // Acme's founding, not the office's
		{kindBegin, "Enterprise pricing usually starts at $30,000 per year.", "", false, ""},
		{kindYear, founded, "singapore team", false, ""}, // Acme's year, not the team's
		{kindYear, "The Singapore team grew to 20 people in 2023.", "singapore team", true, ""},
		// Numbers of names and codes are no counts.
		{kindCount, "Enterprise customers get 24/7 phone support.", "", false, ""},
		{kindCount, "Acme holds a SOC 2 Type II report.", "", false, ""},
		{kindCount, "Data at rest is encrypted with AES-256 keys.", "", false, ""},
		{kindCount, "The API answers HTTP 429 responses when over the limit.", "", false, ""},
		{kindCount, "Acme is ISO 27001 certified.", "", false, ""},
		{kindCount, "Acme has 3 offices.", "", true, ""},
		// A count asked of a noun is one of it or of its synonym, never of
		// another noun the sentence also names.
		{kindCount, founded, "", true, "employees"},
		{kindCount, founded, "", true, "workers"}, // usage: "employee"
		{kindCount, founded, "", false, "clerks"}, // employees are more than clerks
		{kindCount, founded, "", false, "gardeners"},
		{kindCount, "Acme Pipelines copies data from more than 120 sources into the customer's own warehouse.", "", false, "clients"},
		{kindCount, "Around 2,300 customers use the platform.", "", true, "clients"}, // WordNet: client is customer
		// A focus word beside the company's is the subject's, not any.
		{kindBegin, founded, "company singapore", false, ""},
		{kindBegin, founded, "company", true, ""},
	} {
		if got := givesKind(tt.k, tt.s, strings.Fields(tt.focus), tt.noun); got != tt.want {
			t.Errorf("givesKind(%d, %q, %q, %q) = %v, want %v", tt.k, tt.s, tt.focus, tt.noun, got, tt.want)
		}
	}
}

// TestPeopleWorking checks that the people who work at a place are its
// employees, in the question's words and in its search, and that people
// who do anything else are not.
func TestPeopleWorking(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want bool
	}{
		{"How many people work at Acme?", true},
		{"How many folks are employed by you?", true},
		{"how many people working for acme", true},
		{"How many people can attend a live training?", false},
		{"Does the workflow work for people in Europe?", false},
	} {
		words, query := contentWords(tt.q), searchQuery(tt.q)
		if got := slices.Contains(words, "employees") && strings.Contains(query, "employees"); got != tt.want {
			t.Errorf("%q: content words %q, query %q; employees in both = %v, want %v", tt.q, words, query, got, tt.want)
		}
	}
}

// TestForFreeIsNoQualifier checks that "for free" says how a thing is
// had, not what the question's topic is of: the question's words are all
// its topic, while "for annual plans" still qualifies one.
func TestForFreeIsNoQualifier(t *testing.T) {
	q := "How long can I test the product for free?"
	if got := topicWords(q, relevanceWords(q)); got != nil {
		t.Errorf("topicWords(%q) = %q, want none", q, got)
	}
	q = "What is the refund policy for annual plans?"
	if got := topicWords(q, relevanceWords(q)); !slices.Contains(got, "refund") {
		t.Errorf("topicWords(%q) = %q, want refund among them", q, got)
	}
}

// TestWhenScanLinear checks that a question of many "when"s is read in
// time linear in its length: each "when" looks a few words ahead.
func TestWhenScanLinear(t *testing.T) {
	q := tokens(strings.Repeat("when ", 4000) + "founded")
	if got := testing.AllocsPerRun(1, func() { askedKind(q) }); got != 0 {
		t.Errorf("askedKind allocates %v times", got)
	}
	if askedKind(q) != kindNone {
		t.Errorf("askedKind(when when ... founded) = %d, want kindNone: no auxiliary of the past", askedKind(q))
	}
}

// TestValueBonusNeedsFocus checks that a sentence giving the kind asked
// does not stand for a focus word its passage lacks: "about 140
// employees" is no answer to how many employees are in support, though
// another result holds "support".
func TestValueBonusNeedsFocus(t *testing.T) {
	q := "How many employees are in support?"
	rs := []result{{source: "search_knowledge", text: "2 passages, best first:\n\n" +
		"[1] company-overview § Who we are (score 3.00)\nAcme Analytics was founded in 2019 in Lisbon and has about 140 employees in Lisbon, Toronto and Singapore.\n\n" +
		"[2] support-policy § Channels (score 2.00)\nEnterprise customers get 24/7 phone support and a named customer success manager.\n"}}
	if relevant(q, rs) {
		cov, n := passageCover(q, rs)
		t.Errorf("relevant(%q) = true (cover %.2f of %.1f words), want false: no passage counts employees in support", q, cov, n)
	}
}

// TestValueStandsForKindWords checks that a passage giving the kind of
// value asked stands for every word of the question that only says that
// kind ("year" and "formed" of "in what year was the company formed?",
// "length" of "the length of a demo"), beside the question's focus in
// its own words or in everyday synonyms ("firm" for "company"), and
// that it does not stand for a focus the results lack.
func TestValueStandsForKindWords(t *testing.T) {
	rs := []result{{source: "search_knowledge", text: `2 passages for "value", best first:

[1] company-overview § Who we are (score 2.00)
Acme Analytics was founded in 2019 in Lisbon and has about 140 employees in Lisbon, Toronto and Singapore.

[2] faq § How do we book a demo? (score 1.00)
Ask the assistant to book a demo, or write to sales@acme.example. Demos last 45 minutes and are held on business days.
`}}
	for _, tt := range []struct {
		q, want string // want "" asks for no answer
	}{
		{"In what year was the company formed?", "founded in 2019"},
		{"When did the firm begin operating?", "founded in 2019"},
		{"What is the duration of a demo?", "45 minutes"},
		{"In what year was the Toronto kindergarten formed?", ""},
		{"What is the duration of the onboarding retreat?", ""},
	} {
		checkAnswer(t, tt.q, rs, tt.want)
	}
}

// TestCountedRelatedNoun checks that a count asked of a noun is answered
// by a count of a word WordNet relates to it that is a word of a
// business (countNouns: "employees" for "workers"), which the search
// asks for too, and not by a count of another noun; and that the
// company's own name in the question leaves in the sentences that do not
// repeat it.
func TestCountedRelatedNoun(t *testing.T) {
	if got := countQuery("How many workers does Acme have?", "workers acme"); !strings.Contains(got, "employee") {
		t.Errorf("countQuery(workers) = %q, want employee searched too", got)
	}
	rs := overviewResults
	for _, tt := range []struct {
		q, want string // want "" asks for no answer
	}{
		{"How many workers does Acme have?", "140 employees"},
		{"How many organisations use Acme Analytics?", "2,300 customers"},
		{"What is the size of the customer base?", "2,300 customers"}, // "size" says the kind asked
		{"How many shareholders does Acme have?", ""},
		{"How many drivers does Acme have?", ""},
		{"How many clerks does Acme have?", ""},
		{"How many gardeners does Acme have?", ""},
		{"How many workmen does Acme have?", ""},
	} {
		checkAnswer(t, tt.q, rs, tt.want)
	}
}

// overviewResults are the knowledge server's results of a question about
// the company: the sentence of its founding and size, and one that counts
// people of another kind.
var overviewResults = []result{{source: "search_knowledge", text: `2 passages for "count", best first:

[1] company-overview § Who we are (score 2.00)
Acme Analytics was founded in 2019 in Lisbon and has about 140 employees in Lisbon, Toronto and Singapore. Around 2,300 customers use the platform, most of them companies with 50 to 2,000 employees in retail, logistics and software.

[2] onboarding § Training (score 1.00)
Live training sessions for up to 20 people are included in Business and Enterprise.
`}}

// TestBeginOfCompany checks that a question asking when the company
// itself began, named only by its name ("when did Acme begin?"), is
// answered by the year of its founding, and that one asking when it
// began something or somewhere the documents give no year of is not.
func TestBeginOfCompany(t *testing.T) {
	for _, tt := range []struct {
		q, want string // want "" asks for no answer
	}{
		{"When did Acme begin?", "2019"},
		{"When did Acme start?", "2019"},
		{"When did the company begin operating in Singapore?", ""},
		{"When did the company begin selling in Japan?", ""},
		{"When did Acme go public?", ""},
	} {
		checkAnswer(t, tt.q, overviewResults, tt.want)
	}
}

// TestKindCreditOnlyKindWords checks that a value of the kind asked
// stands for the question's words that only say that kind ("year",
// "formed"), and not for its other words the passage lacks: "about 140
// employees" does not say how many work at a plan level.
func TestKindCreditOnlyKindWords(t *testing.T) {
	checkAnswer(t, "In what year was the company formed?", overviewResults, "2019")
	checkAnswer(t, "How many employees work at the best plan level?", overviewResults, "")
}

// checkAnswer checks that the question q is answered from rs with a reply
// that holds want, or, for want "", that rs do not answer it.
func checkAnswer(t *testing.T, q string, rs []result, want string) {
	t.Helper()
	if got := relevant(q, rs); got != (want != "") {
		t.Errorf("relevant(%q) = %v, want %v", q, got, want != "")
		return
	}
	if want != "" {
		if text := compose(q, rs); !strings.Contains(text, want) {
			t.Errorf("compose(%q) lacks %q:\n%s", q, want, text)
		}
	}
}
