package chatbot_test

import "testing"

// offTopicSynonymCases ask of subjects the documents do not cover in
// words that have WordNet synonyms the documents do use ("looker" is
// "viewer", "overcast" is "cloud", "calculate" is "forecast", a product
// name) or that look like chat abbreviations of document words ("erp"
// of "enterprise", "aws" of "always"). A synonym or an abbreviation
// ranks passages; it does not make an uncovered subject covered.
var offTopicSynonymCases = []demoCase{
	{kind: "off-topic", say: "How does Acme compare with Looker?", want: []string{"could not find"}, notWant: []string{"Here is what I found"}},
	// The knowledge server returns no passage here: "cloud" is a synonym
	// of "overcast", but no passage holds another word the question asks
	// (lexicon.Guards' anchors), so the answer is that nothing matches.
	{kind: "off-topic", say: "Is it overcast today?", want: []string{"couldn't find"}, notWant: []string{"Here is what I found"}},
	{kind: "off-topic", say: "Can you reckon my taxes?", want: []string{"could not find"}, notWant: []string{"Here is what I found"}},
	{kind: "off-topic", say: "Does Acme integrate with our ERP?", want: []string{"could not find"}, notWant: []string{"Here is what I found"}},
}

// TestDemoOffTopicSynonyms checks that every offTopicSynonymCases
// question is answered that the sources do not cover it.
func TestDemoOffTopicSynonyms(t *testing.T) {
	runDemoCases(t, offTopicSynonymCases, true)
}
