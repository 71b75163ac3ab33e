package offline

import (
	"slices"
	"testing"
)

// TestUnitsKeptApart checks that a word qualifying a unit ("business")
// does not stand for the unit: hours are not days.
func TestUnitsKeptApart(t *testing.T) {
	for _, c := range []struct {
		s, q string
		want bool
	}{
		{"We acknowledge reports within two business days.", "within 2 business hours?", false},
		{"We acknowledge reports within two business days.", "in 2 business days?", true},
		{"Escalations go to the lead within two hours.", "within 2 business hours", true},
		{"a 4-hour response target", "4 hours", true},
		{"a 14-day free trial", "14 days", true},
		{"every 5 minutes", "5 mins", true},
	} {
		if got := sharesQuantity(c.s, quantities(c.q)); got != c.want {
			t.Errorf("sharesQuantity(%q, %q) = %v, want %v (%v)", c.s, c.q, got, c.want, quantities(c.q))
		}
	}
}

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

// TestCountedCompound checks that a compound of a count and a word is
// matched by the word after any count, and only then.
func TestCountedCompound(t *testing.T) {
	toks := tokens("It enforces multi-factor authentication and 2-step approvals.")
	for w, want := range map[string]bool{"twofactor": true, "singlefactor": false, "threestep": true, "onestep": false,
		"twoyear": false, "factor": false, "oneself": false} {
		if got := countedCompound(w, toks); got != want {
			t.Errorf("countedCompound(%q) = %v, want %v", w, got, want)
		}
	}
	// Counts of one kind stand for each other, never for the other kind:
	// "multi-tenant" is not "single-tenant", "two-year" not "one year".
	for _, c := range []struct {
		w, passage string
		want       bool
	}{
		{"multitenant", "Enterprise can use a dedicated single-tenant region.", false},
		{"singletenant", "Enterprise can use a dedicated single-tenant region.", true},
		{"onetenant", "Enterprise can use a dedicated single-tenant region.", true},
		{"twoyear", "Audit logs are kept for one year.", false},
		{"oneyear", "Audit logs are kept for one year.", true},
		{"threeyear", "Audit logs are kept for seven years on Enterprise.", true},
		{"singlefactor", "It enforces multi-factor authentication.", false},
		{"doublefactor", "It enforces 2-factor authentication.", true},
	} {
		if got := countedCompound(c.w, tokens(c.passage)); got != c.want {
			t.Errorf("countedCompound(%q, %q) = %v, want %v", c.w, c.passage, got, c.want)
		}
	}
}

// TestMixedCourtesies checks greetings mixed across languages, with a
// "how are you" and words for the listener, and what is no greeting.
func TestMixedCourtesies(t *testing.T) {
	for q, want := range map[string]courtesy{
		"hallo, guten morgen":           greets,
		"Buenos días, ¿qué tal?":        greets,
		"Hello! Bonjour!":               greets,
		"salut tout le monde":           greets,
		"Hola amigos, muchas gracias":   thanks,
		"Guten Tag, wie geht es Ihnen?": greets,
		"hello there":                   noCourtesy, // English only: isGreeting's
		"amigo":                         noCourtesy,
		"hola, what is the Team plan?":  noCourtesy,
		"bonjour, je voudrais un prix":  noCourtesy,
	} {
		if got := foreignCourtesy(q); got != want {
			t.Errorf("foreignCourtesy(%q) = %v, want %v", q, got, want)
		}
	}
	for q, want := range map[string]string{
		"Hi! What does Team cost?":       "What does Team cost?",
		"Hola, how much is Business?":    "how much is Business?",
		"Thanks. And for the Team plan?": "And for the Team plan?",
		"Ciao! Come stai?":               "Ciao! Come stai?",
		"Hello, how are you?":            "Hello, how are you?",
		"Price, please: what is Team?":   "Price, please: what is Team?",
	} {
		if got := withoutGreeting(q); got != want {
			t.Errorf("withoutGreeting(%q) = %q, want %q", q, got, want)
		}
	}
}

// TestSlipsOfResultWords checks that a word one slip from a word of the
// results matches it, whether or not it is a word of its own ("trail"
// for "trial", "tires" for "tiers"), the same on every host, that a word
// two slips away does not, and that two words of their own are not one
// ("an other" is not "another").
func TestSlipsOfResultWords(t *testing.T) {
	toks := tokens("Every plan starts with a 14-day free trial. Acme has four pricing tiers.")
	for w, want := range map[string]bool{"trail": true, "trial": true, "tires": true, "tries": false, "buisness": false, "triad": false} {
		if got := matches(w, toks); got != want {
			t.Errorf("matches(%q) = %v, want %v", w, got, want)
		}
	}
	if matches("another", tokens("an other plan")) {
		t.Error(`"an other" matches "another"`)
	}
	if !matches("nonprofits", tokens("Non-profits get 40% off")) {
		t.Error(`"non-profits" does not match "nonprofits"`)
	}
}

// TestStemKeepsWordEnds checks that a five-letter word is shortened only
// by an ending its other forms change.
func TestStemKeepsWordEnds(t *testing.T) {
	for _, c := range []struct {
		w, passage string
		want       bool
	}{
		{"trail", "Live training sessions are included.", false},
		{"price", "Pricing is per seat.", true},
		{"plans", "Every plan starts with a trial.", true},
		{"reply", "Support replies within a day.", true},
		{"limit", "Rate limits depend on the plan.", true},
	} {
		if got := matches(c.w, tokens(c.passage)); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.w, c.passage, got, c.want)
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

// TestOnlyCourtesy checks that a message is a greeting or thanks only
// when every other word is one a greeting or thanks is said with, and
// that a greeting or thanks with a question asks it.
func TestOnlyCourtesy(t *testing.T) {
	for q, want := range map[string]bool{
		"hi":                               true,
		"hello there":                      true,
		"hi all":                           true,
		"hello team":                       true,
		"good morning everyone":            true,
		"How are you doing?":               true,
		"how are you today":                true,
		"Hi, how are you today?":           true,
		"hey, how's it going?":             true,
		"Hey, I need an invoice":           false,
		"Hi, refund policy?":               false,
		"Hello, SSO on Team?":              false,
		"Hi! What does Team cost?":         false,
		"hello, how much is the Team plan": false,
		"how are the plans priced":         false,
	} {
		if got := isGreeting(tokens(q)); got != want {
			t.Errorf("isGreeting(%q) = %v, want %v", q, got, want)
		}
	}
	for q, want := range map[string]bool{
		"thanks":                        true,
		"Thank you so much!":            true,
		"thanks a lot for your help":    true,
		"ok bye":                        true,
		"cheers mate":                   true,
		"thanks, but what about SSO?":   false,
		"Thanks! And for Business?":     false,
		"Cheers, what does Team cost?":  false,
		"thanks, how much is Starter":   false,
		"no thanks, I want the refunds": false,
	} {
		if got := isThanks(tokens(q)); got != want {
			t.Errorf("isThanks(%q) = %v, want %v", q, got, want)
		}
	}
	for q, want := range map[string]courtesy{
		"Gracias! And Team?":  noCourtesy,
		"Merci, et Business?": noCourtesy,
		"Danke und Team?":     noCourtesy,
		"Gracias amigos":      thanks,
		"hallo zusammen":      greets,
	} {
		if got := foreignCourtesy(q); got != want {
			t.Errorf("foreignCourtesy(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestGreetedMessagesReadBack checks that an earlier message is read back
// without the greeting it opened with, by every reader of the transcript.
func TestGreetedMessagesReadBack(t *testing.T) {
	conv := "user: Hi! What does the Team plan cost?\nassistant: $49.\nuser: Thanks. Is SSO in Business?\nassistant: Yes.\nuser: and Enterprise?"
	if got, want := userMessages(conv, "and Enterprise?"), []string{"What does the Team plan cost?", "Is SSO in Business?"}; !slices.Equal(got, want) {
		t.Errorf("userMessages = %q, want %q", got, want)
	}
	if got, want := previousQuestion(conv, "and Enterprise?"), "Is SSO in Business?"; got != want {
		t.Errorf("previousQuestion = %q, want %q", got, want)
	}
	if got, want := questionBefore(conv, "Thanks. Is SSO in Business?"), "What does the Team plan cost?"; got != want {
		t.Errorf("questionBefore = %q, want %q", got, want)
	}
	if got, want := previousQuestion("user: How much is Team?\nuser: and Business?", "and Business?"), "How much is Team?"; got != want {
		t.Errorf("previousQuestion of an ungreeted question = %q, want %q", got, want)
	}
}

// TestSynonymAsWritten checks that a word is found in its synonym group
// as written when its stem is shorter than the group's ("promise" stems
// to "prom").
func TestSynonymAsWritten(t *testing.T) {
	group := []string{"guarant", "commitm", "promis"}
	for w, want := range map[string]bool{"promise": true, "promised": true, "promises": true, "guarantee": true,
		"commitment": true, "prompt": false, "prom": false, "program": false} {
		if got := inGroup(w, group); got != want {
			t.Errorf("inGroup(%q) = %v, want %v", w, got, want)
		}
	}
}
