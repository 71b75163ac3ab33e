package offline

import (
	"slices"
	"strings"
	"testing"
)

// focusResults are passages that share with the questions of TestFocus
// only a generic word ("large", "year", "last", the company's name) and
// one that answers them.
var focusResults = []result{{source: "search_knowledge", text: `4 passages for "focus", best first:

[1] release-notes § 2026.07 (score 3.00)
Query speed on large dashboards improved by about 35%.

[2] security § Certifications (score 2.90)
Acme Analytics holds a SOC 2 Type II report, renewed every year, and is ISO 27001 certified.

[3] faq § How do we book a demo? (score 2.80)
Demos last 45 minutes and are held on business days.

[4] company-overview § Who we are (score 0.10)
Acme Analytics was founded in 2019 in Lisbon and has about 140 employees in Lisbon, Toronto and Singapore.
`}}

// TestFocus checks that a sentence sharing only a generic word with a
// question (a degree, a measure, the company's name, or fewer than half
// of the words that carry what it asks) is neither quoted nor makes the
// results relevant, and that one holding the focus, as written or by a
// synonym, is quoted.
func TestFocus(t *testing.T) {
	for _, tt := range []struct {
		q, want string // want "" asks for no quote
	}{
		{"How large is the Acme parking lot?", ""},
		{"In what year did Acme open a kindergarten?", ""},
		{"How many new hires joined Acme last month?", ""},
		{"In what year was Acme established?", "founded in 2019"},
		{"How many employees does Acme have?", "140 employees"},
		// A collective noun whose synset WordNet relates to "personnel",
		// a word of the usage group of "employees" (lexicon.Usage).
		{"How large is Acme's workforce?", "140 employees"},
		// A beginning in other words than the passage's: a verb WordNet
		// makes a synonym of one, a phrase, a year asked of one.
		{"In what year was the company formed?", "founded in 2019"},
		{"When was Acme set up?", "founded in 2019"},
		{"When did the firm begin operating?", "founded in 2019"},
		{"When did Acme commence trading?", "founded in 2019"},
	} {
		got := compose(tt.q, focusResults)
		quoted := strings.Contains(got, "Here is what I found")
		switch {
		case tt.want == "" && (quoted || relevant(tt.q, focusResults)):
			t.Errorf("%q is answered from sentences that only share generic words with it:\n%s", tt.q, got)
		case tt.want != "" && !strings.Contains(got, tt.want):
			t.Errorf("compose(%q) lacks %q:\n%s", tt.q, tt.want, got)
		}
	}
}

// TestFocusWords checks which of a question's words are its focus: not
// the degree of "how", a measure, the company's name or a frame word.
func TestFocusWords(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want []string
	}{
		{"How large is Acme's workforce?", []string{"workforce"}},
		// The verb of a beginning says what kind of answer is asked, a
		// year of one (kindBegin), as does a phrase of one and the
		// gerund that says what began.
		{"In what year was Acme established?", nil},
		{"When was the firm set up?", []string{"firm"}},
		{"When did the firm begin operating?", []string{"firm"}},
		// Only a gerund of existence leaves; any other says what began.
		{"When did the company begin selling in Japan?", []string{"company", "selling", "japan"}},
		{"When did the company begin operating in Singapore?", []string{"company", "singapore"}},
		{"How many hours does a demo last?", []string{"demo", "last"}},
	} {
		if got := focusWords(tt.q, contentWords(tt.q)); !slices.Equal(got, tt.want) {
			t.Errorf("focusWords(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}
