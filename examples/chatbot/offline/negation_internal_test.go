package offline

import "testing"

// TestNegationAsksTheSame checks that a negation names nothing a passage
// must hold: "which plans do not include SSO?" is answered by the passage
// that says which plans do, as "which plans include SSO?" is, and the
// thing after a list verb makes the question a filter of the list, not
// the list: the sentence that names the four plans answers neither.
func TestNegationAsksTheSame(t *testing.T) {
	rs := []result{{source: "search_knowledge", text: "2 passages, best first:\n\n" +
		"[1] pricing (score 3.00)\nAcme Analytics has four pricing tiers: Starter, Team, Business and Enterprise.\n\n" +
		"[2] security § Access control (score 2.00)\nBusiness and Enterprise support single sign-on with SAML 2.0 and OpenID Connect.\n"}}
	for _, q := range []string{"Which plans include SSO?", "Which plans do NOT include SSO?", "Which tiers don't include SSO?",
		"Which tiers do not come with SSO?"} {
		if !relevant(q, rs) {
			cov, n := passageCover(q, rs)
			t.Errorf("relevant(%q) = false (cover %.2f of %.1f words, words %q), want true", q, cov, n, relevanceWords(q))
		}
		if l := askedList(tokens(q)); l != "" {
			t.Errorf("askedList(%q) = %q, want none: it asks which plans have a thing", q, l)
		}
	}
	for _, q := range []string{"Which plans do you offer?", "What tiers are there?", "Which packages can I buy?"} {
		if askedList(tokens(q)) == "" {
			t.Errorf("askedList(%q) = \"\", want the list asked", q)
		}
	}
}

// TestInitialismNotACategory checks that an initialism that names a kind
// of product ("CRM") is held by a product of that kind (Salesforce) only
// when the question asks about connecting one: "the Acme CRM module" is
// a thing of its own, which a list of sources naming Salesforce is not
// about.
func TestInitialismNotACategory(t *testing.T) {
	rs := []result{{source: "search_knowledge", text: "1 passage, best first:\n\n" +
		"[1] products § Acme Pipelines (score 3.00)\nAcme Pipelines copies data from more than 120 sources (PostgreSQL, Salesforce, HubSpot and others).\n"}}
	if q := "What does the Acme CRM module cost?"; holdsInitialisms(q, rs) {
		t.Errorf("holdsInitialisms(%q) = true, want false: no result names a CRM module", q)
	}
	if q := "Can Pipelines pull data from our CRM?"; !holdsInitialisms(q, rs) {
		t.Errorf("holdsInitialisms(%q) = false, want true: Salesforce is a CRM Pipelines connects to", q)
	}
}
