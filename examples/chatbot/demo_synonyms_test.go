package chatbot_test

import "testing"

// heldOutSynonymCases ask about the bundled documents in words the
// documents do not use: a synonym of the document's word ("clients" for
// "customers", "complimentary" for "free"), an informal abbreviation
// ("reqs", "yrs", "info") or another inflection. They were written before
// the offline model's stemmer and synonym table, and are kept apart from
// every other list so that their pass rate measures how those generalise.
var heldOutSynonymCases = []demoCase{
	{kind: "synonym", say: "How many clients use the platform?", want: []string{"2,300"}},
	{kind: "synonym", say: "How long is the complimentary trial?", want: []string{"14-day"}},
	{kind: "synonym", say: "How many requests per minute does the Business plan permit?", want: []string{"300"}},
	{kind: "synonym", say: "Which databases can Pipelines link to?", want: []string{"PostgreSQL"}},
	{kind: "synonym", say: "Can we pay by bill on an annual contract?", want: []string{"invoice"}},
	{kind: "synonym", say: "Is there a discount on a yearly contract for a big team?", want: []string{"100 or more editors"}},
	{kind: "synonym", say: "How long are cached query outcomes kept?", want: []string{"24 hours"}},
	{kind: "synonym", say: "In which nations can my data be kept?", want: []string{"Frankfurt"}},
	{kind: "synonym", say: "How long do product demonstrations last?", want: []string{"45 minutes"}},
	{kind: "synonym", say: "How frequently does Pipelines sync on Team?", want: []string{"every hour"}},
	{kind: "synonym", say: "Does Acme delete my data when I shut my workspace?", want: []string{"30 days"}},
	{kind: "synonym", say: "In what language are transformations composed?", want: []string{"SQL"}},
	{kind: "synonym", say: "What year was Acme launched?", want: []string{"2019"}},

	{kind: "abbreviation", say: "how many reqs per min does the API allow on Team?", want: []string{"60 requests per minute"}},
	{kind: "abbreviation", say: "how many yrs are audit logs kept on Enterprise?", want: []string{"seven years"}},
	{kind: "abbreviation", say: "info on how long backups are kept pls", want: []string{"30 days"}},
	{kind: "abbreviation", say: "which auth methods does the API support?", want: []string{"OAuth"}},
	{kind: "abbreviation", say: "is there an acct manager for the SOC 2 report?", want: []string{"account manager"}},

	{kind: "inflection", say: "Which certificates does Acme hold?", want: []string{"SOC 2"}},
	{kind: "inflection", say: "How is data encrypting done in transit?", want: []string{"TLS 1.2"}},
	{kind: "inflection", say: "Which sources does Pipelines connect?", want: []string{"120 sources"}},
}

// TestDemoSynonyms runs heldOutSynonymCases and reports the pass rate per
// kind. Like TestDemoHeldOut it fails only when the overall rate falls
// below its floor: 11 of 21 passed before the stemmer and synonym table
// (main at 2a108dd), 16 of 21 after them. The five left ask in words
// whose WordNet synonyms the documents do not use ("complimentary" is
// "gratis", not "free"; "nations" are "countries", not "regions"), in
// an irregular form ("composed" is "write", the documents say
// "written"), or find a sentence with more of the question's own words
// ("shut my workspace"). Since synonyms are keyed by the word, not its
// stem, 15 of 21 pass: "demonstrations" found "demo" only through the
// verb "demonstrate", whose stem it shares (as "busy" shared
// "business"'s), and WordNet's common senses give the noun no such
// synonym.
func TestDemoSynonyms(t *testing.T) {
	const floor = 0.70
	rate := runDemoCases(t, heldOutSynonymCases, false)
	if rate < floor {
		t.Errorf("synonym held-out pass rate %.0f%%, want at least %.0f%%", rate*100, floor*100)
	}
}
