package offline

import (
	"slices"
	"strings"
)

// category is a kind of product that a question may name where the
// sources name only products of the kind: "do you integrate with a CRM?"
// is answered by "SaaS applications (Salesforce, HubSpot, ...)". The
// demo model stands in for a language model, which knows what a CRM is;
// this small lexicon is that knowledge for the kinds a business
// application connects to, not for any sentence.
type category struct {
	// token is the word the question's phrase is read as (contentWords).
	token string
	// phrases are the question's words for the kind, each as its
	// content words ("team chat app" is "team chat app"; stop words
	// such as "a" are not in them).
	phrases [][]string
	// members are the products of the kind, each as its tokens (lower
	// case) joined by a space: a word that is also an ordinary word is
	// written with the word that makes it a product ("microsoft teams",
	// "google ads"), and matched as that phrase (namesMember).
	members []string
}

var categories = []category{
	{"crm", [][]string{{"crm"}, {"crms"}, {"customer", "relationship", "management"}},
		[]string{"salesforce", "hubspot", "microsoft dynamics", "dynamics 365", "pipedrive", "zoho"}},
	{"helpdesk", [][]string{{"helpdesk"}, {"help", "desk"}, {"service", "desk"}, {"support", "desk"}, {"ticketing", "system"}, {"ticketing", "tool"}, {"ticketing"}},
		[]string{"zendesk", "freshdesk", "intercom", "jira"}},
	{"paymentprocessor", [][]string{{"payment", "processor"}, {"payment", "processors"}, {"payment", "provider"}, {"payment", "providers"}, {"payment", "gateway"}, {"payment", "platform"}, {"payments", "platform"}},
		[]string{"stripe", "paypal", "adyen", "braintree"}},
	{"ecommerce", [][]string{{"ecommerce"}, {"online", "store"}, {"online", "shop"}, {"webshop"}, {"web", "shop"}, {"shop", "platform"}, {"store", "platform"}},
		[]string{"shopify", "woocommerce", "magento", "bigcommerce"}},
	{"adplatform", [][]string{{"ad", "platform"}, {"ad", "platforms"}, {"ads", "platform"}, {"advertising", "platform"}, {"advertising", "platforms"}, {"ad", "accounts"}, {"ad", "account"}},
		[]string{"google ads", "microsoft ads", "bing ads", "meta ads", "facebook ads", "linkedin ads", "adwords"}},
	{"chatapp", [][]string{{"chat", "app"}, {"chat", "apps"}, {"chat", "tool"}, {"team", "chat"}, {"messaging", "app"}, {"messaging", "tool"}, {"messenger"}},
		[]string{"slack", "microsoft teams", "discord", "mattermost"}},
	{"objectstorage", [][]string{{"object", "storage"}, {"file", "storage"}, {"storage", "bucket"}, {"bucket"}, {"buckets"}},
		[]string{"s3", "gcs", "azure blob", "blob storage"}},
	{"identityprovider", [][]string{{"idp"}, {"idps"}, {"login", "provider"}, {"login", "providers"}, {"directory", "service"}},
		[]string{"okta", "entra", "onelogin", "auth0"}},
}

// categoryOf maps a category's token to the category.
var categoryOf = func() map[string]*category {
	m := make(map[string]*category, len(categories))
	for i := range categories {
		m[categories[i].token] = &categories[i]
	}
	return m
}()

// withCategories returns words with each phrase of a category
// (categories) replaced by its token: "team chat app" is "chatapp", when
// connecting reports that the question asks about connecting to a
// product (asksConnecting); words itself when it holds none or the
// question does not ask that: "when is the help desk open?" asks about
// our own help desk, not about a helpdesk product. matches still finds
// the phrase's words ("help desk") for the token. connecting is called
// only when words hold a phrase.
func withCategories(words []string, connecting func() bool) []string {
	var out []string
	asked := -1 // unknown until a phrase is found
	for i := 0; i < len(words); {
		c, n := categoryAt(words, i)
		if c != nil && asked < 0 {
			asked = 0
			if connecting() {
				asked = 1
			}
		}
		if c == nil || asked == 0 {
			if out != nil {
				out = append(out, words[i])
			}
			i++
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(words)), words[:i]...)
		}
		if !slices.Contains(out, c.token) {
			out = append(out, c.token)
		}
		i += n
		// "team chat app", "helpdesk software", "CRM system": the kind
		// of thing after the category says no more than it.
		for i < len(words) && productNouns[words[i]] {
			i++
		}
	}
	if out == nil {
		return words
	}
	return out
}

// connectingStems are the beginnings of the words that ask about
// connecting one product to another: integrate, connect, pull, sync,
// send, load, import, export.
var connectingStems = []string{"integrat", "connect", "pull", "sync", "send", "sent", "load", "import", "export",
	"push", "deliver", "link", "plug", "hook", "feed", "stream", "post"}

// asksConnecting reports whether q asks about connecting to or from a
// product ("can Acme pull data from our CRM?", "do you integrate with a
// helpdesk?").
func asksConnecting(q string) bool {
	toks := tokens(q)
	for i, t := range toks {
		for _, s := range connectingStems {
			if strings.HasPrefix(t, s) {
				return true
			}
		}
		// "works with our CRM", "go to our chat app".
		if i+1 < len(toks) && (hasAny([]string{t}, "work", "works", "working") && toks[i+1] == "with" ||
			hasAny([]string{t}, "go", "goes", "going") && hasAny(toks[i+1:i+2], "to", "into", "from")) {
			return true
		}
	}
	return false
}

// productNouns are the words for a product of any kind.
var productNouns = map[string]bool{"app": true, "apps": true, "tool": true, "tools": true, "software": true, "system": true,
	"systems": true, "platform": true, "platforms": true, "service": true, "services": true, "solution": true, "solutions": true}

// categoryAt returns the category whose longest phrase starts at
// words[i], and the phrase's length.
func categoryAt(words []string, i int) (*category, int) {
	var best *category
	n := 0
	for _, cp := range phrasesBy[words[i]] {
		if p := cp.phrase; len(p) > n && i+len(p) <= len(words) && slices.Equal(words[i:i+len(p)], p) {
			best, n = cp.category, len(p)
		}
	}
	return best, n
}

// categoryPhrase is a phrase of a category.
type categoryPhrase struct {
	category *category
	phrase   []string
}

// phrasesBy holds the categories' phrases by their first word.
var phrasesBy = func() map[string][]categoryPhrase {
	m := map[string][]categoryPhrase{}
	for i := range categories {
		for _, p := range categories[i].phrases {
			m[p[0]] = append(m[p[0]], categoryPhrase{&categories[i], p})
		}
	}
	return m
}()

// namesMember reports whether toks name a product of the category whose
// token w is: "crm" is named by "salesforce".
func namesMember(w string, toks []string) bool {
	c := categoryOf[w]
	if c == nil {
		return false
	}
	for _, m := range memberWords[w] {
		for i := range toks {
			if i+len(m) <= len(toks) && slices.Equal(toks[i:i+len(m)], m) {
				return true
			}
		}
	}
	// The category's own words ("help desk", "CRM") name it too.
	for i := range toks {
		if cat, _ := categoryAt(toks, i); cat == c {
			return true
		}
	}
	return false
}

// memberWords holds each category's members (category.members) as
// their words, by the category's token.
var memberWords = func() map[string][][]string {
	m := make(map[string][][]string, len(categories))
	for _, c := range categories {
		for _, p := range c.members {
			m[c.token] = append(m[c.token], strings.Fields(p))
		}
	}
	return m
}()

// phraseOf returns how a question says w: a category's first phrase
// for its token ("chat app" for "chatapp"), else w.
func phraseOf(w string) string {
	if c := categoryOf[w]; c != nil {
		return strings.Join(c.phrases[0], " ")
	}
	return w
}
