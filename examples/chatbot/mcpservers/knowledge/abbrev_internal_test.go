package knowledge

import (
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/bm25"
)

// TestExpansion checks that an abbreviation is expanded from the words a
// passage writes out, and only from them.
func TestExpansion(t *testing.T) {
	for _, c := range []struct {
		a            string
		beforeNumber bool
		text, want   string
	}{
		{"sso", false, "Business supports single sign-on with SAML.", "single sign on"},
		{"2fa", false, "It enforces multi-factor authentication.", "factor authentication"},
		{"2fa", false, "Fast access for admins.", ""},
		{"sev", true, "Severity 1: production outage.", "severity"},
		{"sev", false, "Severity 1: production outage.", ""},
		{"sso", false, "Some small options.", ""},
	} {
		if got := expansion(c.a, c.beforeNumber, c.text); got != c.want {
			t.Errorf("expansion(%q, %q) = %q, want %q", c.a, c.text, got, c.want)
		}
	}
}

// TestOneEdit checks the typing slips a query word is corrected across.
func TestOneEdit(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"polcy", "policy", true}, {"bussiness", "business", true}, {"pirce", "price", true}, {"prixe", "price", true},
		{"policy", "policy", false}, {"plicy", "pricey", false}, {"refund", "rewind", false},
	} {
		if got := oneEdit(c.a, c.b); got != c.want {
			t.Errorf("oneEdit(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestCountedIn checks that a compound of a count is read as the corpus's
// word only after a count of the same kind: one, or more than one.
func TestCountedIn(t *testing.T) {
	for _, c := range []struct {
		text, word string
		kind       int
		want       bool
	}{
		{"It enforces multi-factor authentication.", "factor", countKind("two"), true},
		{"It enforces multi-factor authentication.", "factor", countKind("single"), false},
		{"Enterprise can use a dedicated single-tenant region.", "tenant", countKind("multi"), false},
		{"Enterprise can use a dedicated single-tenant region.", "tenant", countKind("one"), true},
		{"Audit logs are kept for one year.", "year", countKind("two"), false},
		{"Audit logs are kept for 7 years.", "year", countKind("three"), true},
		{"A tenant admin manages users.", "tenant", countKind("single"), false},
	} {
		if got := countedIn(c.text, c.word, c.kind); got != c.want {
			t.Errorf("countedIn(%q, %q, %d) = %v, want %v", c.text, c.word, c.kind, got, c.want)
		}
	}
}

// TestSynonymTermsInitialism checks that a word typed in capitals is an
// initialism, not a chat abbreviation of a corpus word ("ERP" is not
// "enterprise"), while the same letters typed in lower case still are.
func TestSynonymTermsInitialism(t *testing.T) {
	text := "Enterprise customers can export reports."
	ix, err := bm25.New([]bm25.Document{{ID: "a#0", Text: text}}, bm25.Params{})
	if err != nil {
		t.Fatal(err)
	}
	k := &kb{index: ix, passages: []passage{{text: text}}}
	k.guards = guardsOf(k.passages)
	if got := k.synonymTerms("Does it integrate with our ERP?"); len(got) != 0 {
		t.Errorf("synonymTerms(ERP) = %v, want none: an initialism is no abbreviation", got)
	}
	if got := k.synonymTerms("does it integrate with our erp?"); !slices.ContainsFunc(got, func(x bm25.Term) bool { return x.Text == bm25.Stem("enterprise") }) {
		t.Errorf("synonymTerms(erp) = %v, want %q (the lower-case guard is the capitals only)", got, bm25.Stem("enterprise"))
	}
}
