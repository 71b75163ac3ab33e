// Package lexicon holds the English word knowledge the chatbot's offline
// demo model and its search servers share: one stemmer, [Stem], so that a
// question and a passage reduce their words the same way, and a table of
// synonyms derived from WordNet, [Synonyms], so that a question in other
// words than a document's ("clients" for "customers", "permit" for
// "allow") still finds it. The table is keyed by the word, not its stem:
// words that share a stem ("busy", "business") share no synonyms. Two
// more tables reach further, less surely: [Related], the words one step
// away in WordNet (a more general or more specific noun, "folks" and
// "people"; a derived form, "founded" and "founder"), and
// [PhraseSynonyms], the one word a phrase of two stands for ("price
// reduction" is "discount"; with a synonym of its modifier, "cost
// reduction" too), and the phrases that share it first
// ([SisterPhrases]: "charge card" is "credit card"). A function word
// and the word after it may be an adverb of two words whose synonyms
// the word stands for ([Guards.Idiom]: "per annum" is "annually").
// The offline model and the knowledge server
// expand a question by one set of rules, [Guards]: which words may stand
// for synonyms or related words, which of those count, and beside which
// words; both count a related word below a synonym. A fourth table,
// [Usage], holds synonyms in everyday use that WordNet lacks or ranks
// behind rarer senses ("staff" for "employees", "charity" for
// "non-profit"): each group is meant to hold one sense in questions
// about a business, and is looked up by a word's own form or plural, not
// its stem ("found" is no "founded"), so a search counts it even where
// no other word of the question is; a word WordNet relates to nothing
// of its own takes the group of what its synset is related to
// ("workforce": "personnel", so "employees"). A group may hold its
// sense only beside a word of its context ([UsageBeside]: "refund" is a
// service credit beside "downtime", not beside "cancel"), and a phrase
// of the table stands for its group ("bank card" is "credit card").
//
// The stemmer is the Snowball English (Porter2) algorithm of
// github.com/kljensen/snowball. The tables are wordnet.txt, related.txt
// and phrases.txt, written by "go generate" (see internal/wordnetgen)
// from WordNet 3.0, whose licence is in WORDNET-LICENSE beside them;
// usage.txt is written by hand.
package lexicon

//go:generate go run ./internal/wordnetgen -dict /usr/share/wordnet -o wordnet.txt -related related.txt -phrases phrases.txt
