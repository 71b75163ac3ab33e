package offline

import (
	"slices"
	"strings"
	"testing"
)

// TestSpelledNumbersMatch checks that a number matches however it is
// written, in the question and in the passage, and that the search query
// carries both forms.
func TestSpelledNumbersMatch(t *testing.T) {
	for _, c := range []struct {
		w, passage string
		want       bool
	}{
		{"four", "Acme has 4 pricing tiers.", true},
		{"4", "Acme has four pricing tiers.", true},
		{"twelve", "up to 12 editors", true},
		{"twelve", "up to 120 editors", false},
		{"four", "up to 5 editors", false},
	} {
		if got := matches(c.w, tokens(c.passage)); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.w, c.passage, got, c.want)
		}
	}
	if w := relevanceWords("Which plan has 4 data sources?"); !slices.Contains(w, "4") {
		t.Errorf("relevanceWords drops the single digit: %q", w)
	}
	if q := strings.Fields(searchQuery("Which plan has twenty data sources?")); !slices.Contains(q, "20") || !slices.Contains(q, "twenty") {
		t.Errorf("searchQuery lacks a form of the number: %q", q)
	}
}

// TestQuotesShareWhatIsAsked checks that an answer which quotes a
// sentence naming the asked quantity leaves out one that shares only a
// word of the question with it.
func TestQuotesShareWhatIsAsked(t *testing.T) {
	rs := []result{{source: "search_knowledge", text: `3 passages for "plan syncs every 5 minutes", best first:

[1] products § Pipelines (score 3.00)
Incremental syncs run as often as every 5 minutes on the Pro tier and every hour on Basic.

[2] pricing § Trials (score 2.00)
Every plan starts with a 14-day free trial.

[3] pricing § Basic (score 1.00)
Basic includes 3 data sources. Pro includes 20 data sources.
`}}
	for _, c := range []struct {
		q       string
		want    []string
		notWant []string
	}{
		{"which plan syncs every 5 mins?", []string{"every 5 minutes"}, []string{"14-day"}},
		{"which plan includes twenty data sources?", []string{"20 data sources"}, []string{"3 data sources", "14-day"}},
		{"is there a free trial on every plan?", []string{"14-day"}, nil},
	} {
		got := compose(c.q, rs)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("compose(%q) lacks %q:\n%s", c.q, w, got)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(got, w) {
				t.Errorf("compose(%q) has %q:\n%s", c.q, w, got)
			}
		}
	}
}

// TestAbbreviationsMatch checks that an abbreviation matches the words of
// a passage it stands for, and not words that merely share its letters.
func TestAbbreviationsMatch(t *testing.T) {
	for _, c := range []struct {
		w, passage string
		want       bool
	}{
		{"sso", "Business supports single sign-on with SAML.", true},
		{"2fa", "It enforces multi-factor authentication.", true},
		{"2fa", "Fast access for admins.", false},
		{"sev", "Severity 1: production outage.", true},
		{"sev", "Several teams use it.", false},
		{"sso", "Some small options.", false},
	} {
		if got := matches(c.w, tokens(c.passage)); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.w, c.passage, got, c.want)
		}
	}
}
