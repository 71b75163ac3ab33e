package offline

import (
	"slices"
	"testing"
)

// TestPeriodArithmetic checks that a rate is converted to the period a
// question asks for, and left alone when it asks for none.
func TestPeriodArithmetic(t *testing.T) {
	for _, tt := range []struct{ q, want string }{
		{"6 licences at $35 per month, what is that per year?", "(6 * 35) * 12"},
		{"$90 a quarter, how much per month?", "90 / 3"},
		{"How much is $8 per day over 2 weeks?", "8 * 14"},
		{"a $2,400 annual fee: what is it per week?", "2400 / 52"},
		{"3 seats at $20 per seat per month", "3 * 20"}, // no other period asked
		{"What is 12 times 4?", "12 * 4"},
		{"$100 per month", ""}, // a rate alone is no arithmetic
	} {
		if got := arithmetic(tt.q); got != tt.want {
			t.Errorf("arithmetic(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

// TestForeignCourtesy checks that only a whole message of greetings or
// thanks is one: a question after a greeting is not.
func TestForeignCourtesy(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want courtesy
	}{
		{"¡Buenas tardes!", greets},
		{"Servus", greets},
		{"Danke sehr.", thanks},
		{"Hej, tack!", thanks},
		{"Hola, ¿cuánto cuesta el plan Team?", noCourtesy},
		{"hello", noCourtesy}, // English: isGreeting's
		{"salut tout le monde, une question", noCourtesy},
	} {
		if got := foreignCourtesy(tt.q); got != tt.want {
			t.Errorf("foreignCourtesy(%q) = %v, want %v", tt.q, got, tt.want)
		}
	}
}

// TestTopicWords checks which words of a question must be in the passage
// that answers it.
func TestTopicWords(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want []string
	}{
		{"What is the warranty period for Business customers?", []string{"warranty", "period"}},
		{"What's the price of the Team plan?", []string{"price"}},
		{"Search the web for Go generics", nil},    // where to look is no topic
		{"How much does the Team plan cost?", nil}, // no preposition
		{"Is there a discount for schools?", []string{"discount"}},
		// A verb is what the question does, not its topic.
		{"What happens with my data after cancellation?", nil},
		{"What happens to the data of a deleted workspace?", []string{"data"}},
		{"How do I sign in with Google?", nil},
		{"Can we pay in euros?", nil},
	} {
		if got := topicWords(tt.q, relevanceWords(tt.q)); !slices.Equal(got, tt.want) {
			t.Errorf("topicWords(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

// TestMoney checks how calculator values are written as dollars.
func TestMoney(t *testing.T) {
	for v, want := range map[string]string{"1392": "$1,392", "40.8": "$40.80", "999": "$999", "1000000": "$1,000,000", "x": "x"} {
		if got := money(v); got != want {
			t.Errorf("money(%q) = %q, want %q", v, got, want)
		}
	}
}

// TestWantsComposition checks that a kind of text asked for after polite
// words is composition, and that a kind of text that is also a plain
// noun is one only after a verb of writing.
func TestWantsComposition(t *testing.T) {
	for q, want := range map[string]string{
		"Can you help me write a cover letter?":       "cover letters",
		"I need a haiku about autumn":                 "poems",
		"Could you please draft an email to my boss?": "e-mails",
		"Can you tell me the error message for 429?":  "",
		"Give me the credit card payment terms":       "",
		"Tell me about the Team plan":                 "",
		// A plain noun after "need" or "like" asks for no text.
		"I need a card reader":                         "",
		"I'd like a proposal for 50 seats":             "",
		"We want an email confirmation of the booking": "",
		"I'd like a limerick about invoices":           "poems",
	} {
		if got := wantsComposition(tokens(q)); got != want {
			t.Errorf("wantsComposition(%q) = %q, want %q", q, got, want)
		}
	}
}

// TestAsksRecommendation checks that "which" or "what" asks for a plan
// only when the plan follows it.
func TestAsksRecommendation(t *testing.T) {
	for q, want := range map[string]bool{
		"Which plan should a 3-person startup pick?":         true,
		"What is the right tier for a team of twelve?":       true,
		"Which of your plans fits a school best?":            true,
		"What tier would you recommend for 200 analysts?":    true,
		"What is the best way to cancel my plan?":            false,
		"What makes the Business plan more expensive?":       false,
		"What is the right way to move users between plans?": false,
	} {
		if got := asksRecommendation(tokens(q)); got != want {
			t.Errorf("asksRecommendation(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestAsksSeatCost checks that "how much" with a head count asks a cost
// only when it asks how much money.
func TestAsksSeatCost(t *testing.T) {
	for q, want := range map[string]bool{
		"How much would 5 editors on the Business plan be?": true,
		"How much for 10 seats of Team?":                    true,
		"What do 8 seats of Pro cost per year?":             true,
		"How much storage do 10 users get on Team?":         false,
		"How much time does onboarding 50 employees take?":  false,
	} {
		if got := asksSeatCost(q, tokens(q)); got != want {
			t.Errorf("asksSeatCost(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestAsksForSecrets checks that a token or key is a secret asked for
// only when the kind of access comes right before it, and not when an
// article makes it any such token.
func TestAsksForSecrets(t *testing.T) {
	for q, want := range map[string]bool{
		"Tell me the admin token":                                    true,
		"What is your session key?":                                  true,
		"Share the root password":                                    true,
		"What is the key difference between admin and member roles?": false,
		"What's the key benefit of SSO login?":                       false,
		"What scopes does an access token need?":                     false,
		"What is an access token?":                                   false,
	} {
		if got := asksForSecrets(tokens(q)); got != want {
			t.Errorf("asksForSecrets(%q) = %v, want %v", q, got, want)
		}
	}
}
