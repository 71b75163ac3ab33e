package offline

import (
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

// TestCountedCompound checks that a compound of a count and a word is
// matched by the word after any count, and only then.
func TestCountedCompound(t *testing.T) {
	toks := tokens("It enforces multi-factor authentication and 2-step approvals.")
	for w, want := range map[string]bool{"twofactor": true, "singlefactor": false, "threestep": true, "onestep": false,
		"twoyear": false, "factor": false, "oneself": false} {
		if got := countedCompound(w, toks); got != want {
			t.Errorf("countedCompound(%q) = %v, want %v", w, got, want)
		}
	}
	// Counts of one kind stand for each other, never for the other kind:
	// "multi-tenant" is not "single-tenant", "two-year" not "one year".
	for _, c := range []struct {
		w, passage string
		want       bool
	}{
		{"multitenant", "Enterprise can use a dedicated single-tenant region.", false},
		{"singletenant", "Enterprise can use a dedicated single-tenant region.", true},
		{"onetenant", "Enterprise can use a dedicated single-tenant region.", true},
		{"twoyear", "Audit logs are kept for one year.", false},
		{"oneyear", "Audit logs are kept for one year.", true},
		{"threeyear", "Audit logs are kept for seven years on Enterprise.", true},
		{"singlefactor", "It enforces multi-factor authentication.", false},
		{"doublefactor", "It enforces 2-factor authentication.", true},
	} {
		if got := countedCompound(c.w, tokens(c.passage)); got != c.want {
			t.Errorf("countedCompound(%q, %q) = %v, want %v", c.w, c.passage, got, c.want)
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
