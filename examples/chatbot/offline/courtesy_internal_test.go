package offline

import (
	"slices"
	"testing"
)

// TestPlainSpellingLeavesCode checks that texting forms are written out
// only as words of a sentence: code and quoted text stay as written.
func TestPlainSpellingLeavesCode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`print(r"\w+")`, `print(r"\w+")`},
		{`x = u"text"`, `x = u"text"`},
		{`print("u")`, `print("u")`},
		{"run `echo ur name` please", "run `echo ur name` please"},
		{"f(u, r)", "f(u, r)"},
		{"where r ur offices", "where are your offices"},
		{"Where's your HQ?", "Where is your HQ?"},
		{"WHERES the office", "Where is the office"},
		{"R is a language", "R is a language"},
	} {
		if got := plainSpelling(c.in); got != c.want {
			t.Errorf("plainSpelling(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDashJoinsOpener checks that a word joined by a dash to the next is
// not an opener: the dash is a mark only with a space next to it.
func TestDashJoinsOpener(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Right-to-left scripts supported?", "Right-to-left scripts supported?"},
		{"So-called viewers, are they free?", "So-called viewers, are they free?"},
		{"Well-known integrations?", "Well-known integrations?"},
		{"One more thing - is there an API?", "is there an API?"},
		{"One more thing -- is there an API?", "is there an API?"},
		{"Right - is there an API?", "is there an API?"},
	} {
		if got := withoutGreeting(c.in); got != c.want {
			t.Errorf("withoutGreeting(%q) = %q, want %q", c.in, got, c.want)
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
