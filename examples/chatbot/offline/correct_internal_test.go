package offline

import "testing"

// TestCorrected checks how a correction rewrites the previous question.
func TestCorrected(t *testing.T) {
	for _, c := range []struct{ prev, say, want string }{
		{"What does Team cost per month?", "no, I meant the Business plan", "What does Business cost per month?"},
		{"How much would 5 seats on Starter cost?", "sorry, I meant 8 seats", "How much would 8 seats on Starter cost?"},
		{"Is SSO on Team?", "Actually, is it on Business?", "Is SSO on Business?"},
		{"What is 12 times 4?", "no, I meant 12 times 5", "12 times 5"},
		// Not corrections: a remark, and a first message.
		{"How much is Team?", "I mean it is expensive", ""},
		{"", "actually, Business", ""},
	} {
		conv := ""
		if c.prev != "" {
			conv = "user: " + c.prev + "\nassistant: ok"
		}
		if got := corrected(c.say, conv); got != c.want {
			t.Errorf("corrected(%q) after %q = %q, want %q", c.say, c.prev, got, c.want)
		}
	}
}

// TestSearchParts checks which messages are asked as several searches.
func TestSearchParts(t *testing.T) {
	for _, c := range []struct {
		q    string
		want int
	}{
		{"How much is the Team plan and what is its uptime SLA?", 2},
		{"What is the Team rate limit, how long are backups kept and where are your offices?", 3},
		{"Is Business billed annually? And can I pay by invoice?", 2},
		{"How long are audit logs kept?", 0},
		{"A shop sells pens at $3 each. How much do 17 pens cost?", 0}, // a statement, then arithmetic
		{"What is 15% of 300 and how much is Team?", 0},                // the calculator's
		{"What would 3 Business seats cost and what is the SLA?", 0},   // a seat cost
	} {
		if got := len(searchParts(c.q, nil)); got != c.want {
			t.Errorf("searchParts(%q) has %d parts, want %d", c.q, got, c.want)
		}
	}
	if q := partQuery([]string{"How much is the Team plan", "what is its uptime SLA?"}, 1); q != "team uptime sla" {
		t.Errorf("partQuery of a part with a pronoun = %q, want the first part's name in it", q)
	}
}

// TestCorrectedFollowUp checks that a correction after a follow-up
// corrects the question the follow-up leans on, with the follow-up.
func TestCorrectedFollowUp(t *testing.T) {
	conv := "user: What does Starter cost per seat?\nassistant: $19.\nuser: and for 4 seats per year?\nassistant: $912."
	if got, want := corrected("sorry, I meant Team", conv), "What does Team cost per seat? and for 4 seats per year?"; got != want {
		t.Errorf("corrected = %q, want %q", got, want)
	}
}

// TestCorrectedTwice checks that a correction of a correction corrects
// the question the first one made.
func TestCorrectedTwice(t *testing.T) {
	conv := "user: What does Starter cost per seat?\nassistant: $19.\nuser: and for 4 seats per year?\nassistant: $912.\nuser: sorry, I meant Team\nassistant: $2,352."
	if got, want := corrected("no, I meant 6 seats", conv), "What does Team cost per seat? and for 6 seats per year?"; got != want {
		t.Errorf("corrected = %q, want %q", got, want)
	}
	if got, want := corrected("actually, Business", "user: Is SSO on Team?\nassistant: no\nuser: sorry, I meant Starter\nassistant: no"), "Is SSO on Business?"; got != want {
		t.Errorf("corrected = %q, want %q", got, want)
	}
}
