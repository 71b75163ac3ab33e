package offline

import "testing"

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
