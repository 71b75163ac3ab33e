package chatbot_test

import "testing"

// synsetCases ask, in other words than the documents', for facts whose
// relation the lexicon's WordNet tables already hold: the year of a
// beginning asked with its measure before a verb of founding that only a
// synonym relates to "founded" ("set up", "instituted"), a phrase whose
// modifier is a synonym of the one a WordNet phrase has ("cost
// reduction" of "price reduction", "discount"), a phrase that shares its
// one word with the document's ("charge cards" and "credit cards" are
// both "plastic"), a phrasal verb in the third person ("goes down"), an
// adverb of two words ("per annum"),
// and a collective noun whose synset is related to
// the word a usage group holds ("workforce", "manpower", "personnel",
// "employees"). Each was answered with an unrelated "every year" fact or
// declined before.
var synsetCases = []demoCase{
	{kind: "begin-year", say: "Which year was Acme set up?", want: []string{"2019"}, notWant: []string{"every year", "could not find"}},
	{kind: "begin-year", say: "What year was Acme instituted?", want: []string{"2019"}, notWant: []string{"every year", "could not find"}},
	{kind: "phrase", say: "Do charities get a cost reduction?", want: []string{"40%"}, notWant: []string{"could not find"}},
	{kind: "phrase", say: "Do you accept charge cards?", want: []string{"Credit cards"}, notWant: []string{"could not find"}},
	{kind: "collective", say: "How big is Acme's workforce?", want: []string{"140"}, notWant: []string{"could not find"}},
	// A phrasal verb asked in its sentence's person ("goes down" is "go
	// down", "fall": "uptime falls below the commitment").
	{kind: "phrasal", say: "What happens if the service goes down?", want: []string{"10%"}, notWant: []string{"could not find"}},
	// A number after an initialism names it, and counts nothing: the
	// sentence with "SOC 2 Type II report" shares what "SOC 2 report"
	// asks.
	{kind: "named-number", say: "Is the SOC 2 report refreshed annually?", want: []string{"renewed every year"}},
	// An adverb of two words, a function word's ("per annum" is "per
	// year", "annually"), stands for its synonyms.
	{kind: "idiom", say: "How much is Enterprise per annum?", want: []string{"$30,000"}, notWant: []string{"could not find"}},
	// What the documents do not say stays unanswered.
	{kind: "unanswered", say: "What year was Globex BI established?", notWant: []string{"2019"}},
}

// TestDemoSynsets checks every synsetCases question.
func TestDemoSynsets(t *testing.T) {
	runDemoCases(t, synsetCases, true)
}
