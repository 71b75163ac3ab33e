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
		"Thanks. How much is the Team plan?":    {"Team"},
		"Hi! What does Starter cost? And Team?": {"Starter", "Team"},
		"x Actually the Business plan":          {"Business"},
		"Is Forecast in Business? Sorry, Team.": {"Forecast", "Business", "Team"},
		"What is the SLA on Enterprise":         {"SLA", "Enterprise"},
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
	for w, want := range map[string]bool{"twofactor": true, "singlefactor": true, "threestep": true, "twoyear": false, "factor": false, "oneself": false} {
		if got := countedCompound(w, toks); got != want {
			t.Errorf("countedCompound(%q) = %v, want %v", w, got, want)
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
