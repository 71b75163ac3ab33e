package lexicon

import "strings"

// StopWord reports whether w, a lower-case word, is a function word of a
// question: one that asks ("what", "compare", "need") or joins ("the",
// "with") but names nothing searched for. The offline demo model leaves
// these out of a question's content words, and both it and the knowledge
// server neither expand them to synonyms nor let synonyms count beside
// them (see [Guards]). A negation ("not", "don't") is one: "which plans
// do not include SSO?" is answered by the passage that says which do,
// which need not hold "not".
func StopWord(w string) bool {
	return stopWords[w]
}

// StopWords returns the words StopWord reports, in a new slice.
func StopWords() []string {
	return strings.Fields(stopList)
}

const stopList = `a an the and or but of to in on at for with by from about as is are was were be been being
	do does did done have has had i me my we our us you your it its this that these those there their they them what which who whom
	whose when where why how can could would should will shall may might must please tell show give find get know let lets
	want like need some any all more most much many than then so if into over also just what's i'm it's vs versus against
	compare comparing comparison up out per new whats hows wheres whos thats
	until someone somebody anyone anybody u ur r pls plz
	not don't doesn't didn't isn't aren't wasn't weren't won't can't cannot dont doesnt didnt isnt arent cant`

var stopWords = func() map[string]bool {
	m := make(map[string]bool, 160)
	for _, w := range strings.Fields(stopList) {
		m[w] = true
	}
	return m
}()
