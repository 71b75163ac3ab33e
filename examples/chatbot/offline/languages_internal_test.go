package offline

import (
	"slices"
	"testing"
)

// TestForeignArithmetic checks that the arithmetic of German, French and
// Spanish reaches the calculator, and that the same words elsewhere do
// not make an expression.
func TestForeignArithmetic(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"Was ist 12 mal 7?", "12 * 7"},
		{"Wie viel ist 100 geteilt durch 8?", "100 / 8"},
		{"Was ist zwölf mal drei?", "12 * 3"},
		{"was ist 2 mal 3 mal 4", "2 * 3 * 4"},
		{"Combien font sept fois huit ?", "7 * 8"},
		{"Combien fait 81 divisé par 9 ?", "81 / 9"},
		{"Combien font 20 moins 7 ?", "20 - 7"},
		{"¿Cuánto es 100 entre 4?", "100 / 4"},
		{"¿Cuánto son 30 más 12?", "30 + 12"},
		{"cuanto es veinte mas cinco", "20 + 5"},
		{"Was ist vierzig minus acht?", "40 - 8"},
		{"What is 7 plus 5 times 2?", "7 + 5 * 2"},
		// Operator words that stand between no numbers are words.
		{"por favor, ¿cuánto cuesta el plan Team?", ""},
		{"¿Hay un descuento entre 3 y 4 editores?", ""},
		{"Combien coûte le plan Team pour six éditeurs ?", ""},
		{"Was kostet der Plan mal?", ""},
	} {
		if got := arithmetic(c.q); got != c.want {
			t.Errorf("arithmetic(%q) = %q, want %q", c.q, got, c.want)
		}
	}
}

// TestAskedKind checks which questions ask a place or a duration, and
// that a sentence giving one is recognised.
func TestAskedKind(t *testing.T) {
	for _, c := range []struct {
		q               string
		place, duration bool
	}{
		{"Where is my data stored?", true, false},
		{"Which countries host my data?", true, false},
		{"Is a self-hosted deployment possible?", false, false},
		{"How fast is support on Business?", false, true},
		{"how soon does support get back to me", false, true},
		{"How many hours until an urgent ticket is answered?", false, true},
		{"What is the response time on Team?", false, true},
		{"Do Enterprise customers get faster help with emergencies?", false, true},
		{"where r ur offices", true, false},
		{"How many editors does Starter allow?", false, false},
		{"How much does Team cost?", false, false},
	} {
		if got := asksPlace(c.q); got != c.place {
			t.Errorf("asksPlace(%q) = %v, want %v", c.q, got, c.place)
		}
		if got := asksDuration(tokens(c.q)); got != c.duration {
			t.Errorf("asksDuration(%q) = %v, want %v", c.q, got, c.duration)
		}
	}
	// The time of "the reply time" is the duration, not a word to find.
	if w := relevanceWords("What's the reply time for tickets on Business?"); slices.Contains(w, "time") {
		t.Errorf("relevanceWords of a reply time = %q, want no \"time\"", w)
	}
	for s, want := range map[string]bool{
		"First-response targets are one business day on Team.": true,
		"Backups are kept for 30 days.":                        true,
		"Business costs $89 per editor per month.":             false,
		"Starter includes 3 data sources.":                     false,
	} {
		if got := namesDuration(s); got != want {
			t.Errorf("namesDuration(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestOwnerWords checks the words of what a topic is of, which the
// sources must name.
func TestOwnerWords(t *testing.T) {
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"What's the price of your blockchain add-on?", []string{"blockchain"}},
		{"What's the price of the Team plan?", []string{"team"}},
		{"What is the refund policy for annual plans?", nil},
		{"Is there a discount for schools of 5 editors?", nil},
		{"How much does Team cost?", nil},
	} {
		if got := ownerWords(c.q, relevanceWords(c.q)); !slices.Equal(got, c.want) {
			t.Errorf("ownerWords(%q) = %q, want %q", c.q, got, c.want)
		}
	}
}

// TestForeignArithmeticNumbers checks decimal commas, dots between
// thousands, and the number words and operators that are no arithmetic
// out of an arithmetic question.
func TestForeignArithmeticNumbers(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"Was ist 2,5 mal 4?", "2.5 * 4"},
		{"Combien font 7,5 fois 2 ?", "7.5 * 2"},
		{"Was ist 1.000 geteilt durch 8?", "1000 / 8"},
		{"¿Cuánto es 2.500 más 1,5?", "2500 + 1.5"},
		{"¿Cuánto es 6 por 7?", "6 * 7"},
		{"¿Es seguro al cien por cien?", ""},
		{"Revisamos los paneles uno por uno", ""},
		{"¿Hay una oferta 2 por 1?", ""},
	} {
		if got := arithmetic(c.q); got != c.want {
			t.Errorf("arithmetic(%q) = %q, want %q", c.q, got, c.want)
		}
	}
	for _, s := range []string{"3 mil plus 2 mil", "al cien por cien", "uno por uno", "cinq cent plus deux"} {
		if got := foreignArithmetic(s); got != s {
			t.Errorf("foreignArithmetic(%q) = %q, want it unchanged", s, got)
		}
	}
	for _, c := range []struct {
		q    string
		want bool
	}{
		{"¿Tienen soporte 24/7?", false},
		{"Somos 10-15 usuarios, ¿qué plan nos conviene?", false},
		{"Mein Auftrag 4521-889 ist nicht angekommen", false},
		{"Was ist 12 mal 7?", true},
		{"¿Cuánto es 5 + 3?", true},
	} {
		if got := foreignCalculation(c.q); got != c.want {
			t.Errorf("foreignCalculation(%q) = %v, want %v", c.q, got, c.want)
		}
	}
}

// TestRoundTheClock checks that availability around the clock is no
// division, in English as in another language.
func TestRoundTheClock(t *testing.T) {
	for _, q := range []string{"Do you offer 24/7 support?", "Is phone support 24x7?", "¿Tienen soporte 24/7?"} {
		if got := arithmetic(q); got != "" {
			t.Errorf("arithmetic(%q) = %q, want none", q, got)
		}
	}
	for _, q := range []string{"¿Tienen soporte 24/7?", "Somos 10-15 usuarios, ¿qué plan nos conviene?"} {
		if !notEnglish(q) {
			t.Errorf("notEnglish(%q) = false, want true", q)
		}
	}
}

// TestAskedKindFrames checks that "where", "fast" and "soon" ask a place
// or a duration only in their frames, and which questions ask a list.
func TestAskedKindFrames(t *testing.T) {
	for _, c := range []struct {
		q               string
		place, duration bool
	}{
		{"Where do Team customers get support?", false, false},
		{"Where can I change my password?", false, false},
		{"Can we host Acme on our own servers?", false, false},
		{"Do you support SQL Server?", false, false},
		{"Where are your servers located?", true, false},
		{"Is Acme a fast-growing company?", false, false},
		{"Quick question: do non-profits get a discount?", false, false},
		{"Is the Slack integration coming soon?", false, false},
		{"When was the invoice issued?", false, false},
		{"Is support quick on Business?", false, false},
		{"As soon as a ticket is opened, how quickly do you reply?", false, true},
		{"What is the length of a demo session?", false, true},
		{"Tell me the duration of the free trial", false, true},
		{"Is there a length limit on dashboard names?", false, false},
	} {
		if got := asksPlace(c.q); got != c.place {
			t.Errorf("asksPlace(%q) = %v, want %v", c.q, got, c.place)
		}
		if got := asksDuration(tokens(c.q)); got != c.duration {
			t.Errorf("asksDuration(%q) = %v, want %v", c.q, got, c.duration)
		}
	}
	for _, c := range []struct{ q, want string }{
		{"What plans do you offer?", "plan"},
		{"Which tiers are there?", "tier"},
		{"Which products are available?", "product"},
		{"What does the Team plan cost?", ""},
		{"Which plan is best for 10 editors?", ""},
	} {
		if got := askedList(tokens(c.q)); got != c.want {
			t.Errorf("askedList(%q) = %q, want %q", c.q, got, c.want)
		}
	}
	if !enumerates("Acme Analytics has four pricing tiers: Starter, Team, Business and Enterprise.", "plan") {
		t.Error("the tier list does not enumerate plans")
	}
	if enumerates("Acme Academy offers free self-paced courses for editors and viewers.", "plan") {
		t.Error("a sentence with no list enumerates plans")
	}
}
