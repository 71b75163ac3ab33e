package offline

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// corpusPlans returns the shipped knowledge base's pricing document as
// the search results planOffers reads: one passage per section.
func corpusPlans(t *testing.T) []result {
	t.Helper()
	raw, err := os.ReadFile("../mcpservers/knowledge/corpus/pricing.md")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("10 passages for \"plans\", best first:\n")
	for i, sec := range strings.Split(string(raw), "\n## ")[1:] {
		name, body, _ := strings.Cut(sec, "\n")
		fmt.Fprintf(&b, "\n[%d] pricing § %s (score %.2f)\n%s\n", i+1, name, 3-float64(i)/10, strings.Join(strings.Fields(body), " "))
	}
	return []result{{source: "search_knowledge", text: b.String()}}
}

// TestCheapestPlanWithNeed checks that "the cheapest plan with X" is
// answered by the cheapest plan that has X, not the cheapest plan.
func TestCheapestPlanWithNeed(t *testing.T) {
	rs := corpusPlans(t)
	for _, tt := range []struct{ q, want string }{
		{"What's the cheapest plan with API access?", "Team looks like the best fit"},
		{"What's the cheapest plan with SSO?", "Business looks like the best fit"},
	} {
		w := tokens(tt.q)
		if x := asksExtremePlan(w); x != "" {
			t.Errorf("asksExtremePlan(%q) = %q, want it left to the recommendation", tt.q, x)
		}
		if !asksRecommendation(w) {
			t.Errorf("asksRecommendation(%q) = false", tt.q)
			continue
		}
		if got, _ := recommend(tt.q, rs); !strings.Contains(got, tt.want) {
			t.Errorf("recommend(%q) lacks %q:\n%s", tt.q, tt.want, got)
		}
	}
	// Something else than a plan's need: not the cheapest plan either.
	if x := asksExtremePlan(tokens("What's the cheapest way to upgrade my plan?")); x != "" {
		t.Errorf("asksExtremePlan of the cheapest way to upgrade = %q", x)
	}
	// The plain question is still the cheapest plan.
	for _, q := range []string{"What's the cheapest plan?", "which plan is cheapest?", "What is the cheapest plan for 3 editors?"} {
		if x := asksExtremePlan(tokens(q)); x != "cheap" {
			t.Errorf("asksExtremePlan(%q) = %q, want cheap", q, x)
		}
	}
}

// TestChoiceNeedNoNamedPlanHas checks that a need neither named plan has
// is said to be missing, with the plan that has it, rather than dropped.
func TestChoiceNeedNoNamedPlanHas(t *testing.T) {
	rs := corpusPlans(t)
	for _, tt := range []struct {
		q             string
		want, notWant []string
	}{
		{"Does Starter or Team include priority support?", []string{"Neither Starter nor Team has priority support", "Business has it", "priority support with a 4-hour"}, []string{"all have", "both have"}},
		{"Which has phone support, Team or Business?", []string{"Neither Team nor Business has phone support", "Enterprise has it", "24/7 phone support"}, []string{"all have", "both have"}},
		{"Does Starter or Team include SSO?", []string{"Neither Starter nor Team has SSO", "Business has it"}, []string{"Here is how"}},
		{"Which has API access, Team or Business?", []string{"Team and Business both have API access; Team costs less."}, []string{"all have"}},
	} {
		checkComparison(t, tt.q, rs, tt.want, tt.notWant)
	}
}

// TestChoiceDeniedWords checks that a word a passage denies ("with no
// editor limit") or uses in another sense ("the Team rate limit") is not
// a plan having it, and that a price sentence saying "no" is no lack.
func TestChoiceDeniedWords(t *testing.T) {
	rs := corpusPlans(t)
	for _, p := range planOffers(rs) {
		if slices.Contains(p.lacks, p.priceText) {
			t.Errorf("%s's price sentence is read as a lack: %q", p.name, p.priceText)
		}
	}
	q := "Which has a seat limit, Starter or Team?"
	got, ok := comparePlans(q, rs)
	if !ok || !strings.Contains(got, "only Starter has") || strings.Contains(got, "only Team has") {
		t.Errorf("comparePlans(%q) = %v:\n%s", q, ok, got)
	}
	if toks := tokens("Team costs $49 per editor per month with no editor limit."); states("limit", toks) {
		t.Errorf("states(limit) of a sentence that denies it = true")
	}
	if toks := tokens("It adds a limit on exports and no audit log."); !states("limit", toks) {
		t.Errorf("states(limit) of a sentence that gives it = false")
	}
}

// TestSummaryTurnsOnlyTheSummaryLine checks that only the summary's own
// line is read back as exchanges: a message's continuation line, or a
// reply that quotes a summary, stays as it is.
func TestSummaryTurnsOnlyTheSummaryLine(t *testing.T) {
	conv := "user: what does the summary say?\nassistant: It says:\nThe user asked: \"How much is Team?\". The assistant replied: $49.\nuser: thanks"
	if got := withSummaryTurns(conv); got != conv {
		t.Errorf("a quoted summary in a reply was rewritten:\n%s", got)
	}
	conv = "assistant: The user asked: \"x\". That is what I saw.\nuser: ok"
	if got := withSummaryTurns(conv); got != conv {
		t.Errorf("an assistant line was rewritten:\n%s", got)
	}
	conv = "Summary of earlier messages: The user asked: \"How much is Team?\". The assistant replied: $49.\nuser: and Business?"
	want := "user: How much is Team?\nassistant: $49.\nuser: and Business?"
	if got := withSummaryTurns(conv); got != want {
		t.Errorf("withSummaryTurns =\n%s\nwant\n%s", got, want)
	}
}
