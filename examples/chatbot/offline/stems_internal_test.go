package offline

import "testing"

// TestMatchesWholeStems checks that a question word matches a results
// word by their whole Porter2 stems, not by one stem starting the other
// word: "international" stems to "intern", which starts "internet" and
// "internship", and "plans" to "plan", which starts "planet". A name of the documents' own matches only its own forms:
// "busy" stems to "busi" as "Business" does, but is no plan. Inflections
// still match, the hand-made groups still match by their prefixes, and a
// hyphenated word still matches its two halves.
func TestMatchesWholeStems(t *testing.T) {
	for _, c := range []struct {
		word, text string
		want       bool
	}{
		{"busy", "The Business plan costs $89.", false},
		{"international", "See the internet status page.", false},
		{"international", "The internship program is open.", false},
		{"plans", "The planet is round.", false},    // "plan" starts "planet"
		{"forms", "Formulas are supported.", false}, // "form" starts "formula"
		{"busy", "Businesses get a discount.", false},
		{"businesses", "The Business plan costs $89.", true},
		{"pricing", "Prices are in US dollars.", true},
		{"plans", "Every plan has a trial.", true},
		{"retained", "Logs are kept for a year.", true},  // a hand-made group
		{"nonprofits", "Non-profits get 40% off.", true}, // hyphenated
		{"multiyear", "Multi-year contracts get a discount.", true},
		{"internal", "Internal audits run every quarter.", true},
	} {
		if got := matches(c.word, tokens(c.text)); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.word, c.text, got, c.want)
		}
	}
}
