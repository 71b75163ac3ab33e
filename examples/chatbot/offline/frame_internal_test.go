package offline

import "testing"

// TestFollowUpFrame checks that a follow-up of a follow-up carries the
// whole earlier question over, with its own name or number in place of
// the one it replaces.
func TestFollowUpFrame(t *testing.T) {
	conv := func(msgs ...string) string {
		s := ""
		for _, m := range msgs {
			s += "user: " + m + "\nassistant: ok\n"
		}
		return s
	}
	for _, c := range []struct {
		conversation, q, want string
	}{
		{conv("How much is the Team plan?", "and for 12 editors per year?"), "what about Starter?",
			"How much is the Starter plan? and for 12 editors per year?"},
		{conv("What does the Business tier cost for 8 seats?", "and per year?"), "and for 30 seats?",
			"What does the Business tier cost for seats? and per year?"},
		{conv("How much is the Team plan?"), "and Business?", "How much is the Business plan?"},
		{conv("Does Acme Insights support SSO?"), "and Starter?", "Does Acme Insights support SSO?"},
		{"", "and Starter?", ""},
	} {
		if got := followUpFrame(c.conversation, c.q); got != c.want {
			t.Errorf("followUpFrame(%q) = %q, want %q", c.q, got, c.want)
		}
	}
}
