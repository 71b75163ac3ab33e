package offline

import (
	"testing"
)

// TestMembersAsPhrases checks that a product named by an ordinary word
// names its category only with the word that makes it the product.
func TestMembersAsPhrases(t *testing.T) {
	for _, c := range []struct {
		token, text string
		want        bool
	}{
		{"chatapp", "so most teams see their own data within an hour", false},
		{"chatapp", "Reports can be delivered by email, Slack and Microsoft Teams.", true},
		{"chatapp", "Post a summary to Microsoft Teams", true},
		{"adplatform", "We never show ads to your viewers.", false},
		{"adplatform", "Connect Google Ads and LinkedIn Ads.", true},
		{"crm", "The dynamics of a growing team change quickly.", false},
		{"crm", "Sync accounts from Microsoft Dynamics.", true},
		{"objectstorage", "The blob of JSON is stored as is.", false},
		{"objectstorage", "Export to S3 or Azure Blob.", true},
	} {
		if got := namesMember(c.token, tokens(c.text)); got != c.want {
			t.Errorf("namesMember(%q, %q) = %v, want %v", c.token, c.text, got, c.want)
		}
	}
}
