// Package lexicon holds the English word knowledge the chatbot's offline
// demo model and its search servers share: one stemmer, [Stem], so that a
// question and a passage reduce their words the same way, and a table of
// synonyms derived from WordNet, [Synonyms], so that a question in other
// words than a document's ("clients" for "customers", "permit" for
// "allow") still finds it. The table is keyed by the word, not its stem:
// words that share a stem ("busy", "business") share no synonyms. The
// offline model and the knowledge server expand a question by one set of
// rules, [Guards]: which words may stand for synonyms, which synonyms
// count, and beside which words.
//
// The stemmer is the Snowball English (Porter2) algorithm of
// github.com/kljensen/snowball. The table is wordnet.txt, written by
// "go generate" (see internal/wordnetgen) from WordNet 3.0, whose licence
// is in WORDNET-LICENSE beside it.
package lexicon

//go:generate go run ./internal/wordnetgen -dict /usr/share/wordnet -o wordnet.txt
