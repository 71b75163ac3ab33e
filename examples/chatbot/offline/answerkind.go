package offline

import (
	"regexp"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// An answer kind is the form of the value a question asks for: "how
// many" asks a count, "what year" or "when was it founded" a year. A
// sentence that holds a value of that form, beside a word of what the
// question is about, says what is asked even when it names the thing in
// other words ("2,300 customers" for "how many businesses ...", "founded
// in 2019" for "when did Acme get started?"). Durations and places are
// kinds of their own (asksDuration, asksPlace).

// answerKind is the form of value a question asks for.
type answerKind int

const (
	kindNone  answerKind = iota
	kindCount            // a count: "how many", "the number of", "how big is the staff"
	kindYear             // a year: "what year", "how old"
	kindBegin            // the year of a beginning: "when was it founded?", "when did it get started?"
)

// beginVerbs are the forms of verbs of a beginning, whose "when" asks a
// year ("when was Acme founded?", "when did it get started?"); "when
// does a downgrade take effect?" asks no year. They are whole words: a
// word they begin ("Starter", "openly") is no beginning.
var beginVerbs = map[string]bool{
	"founded": true, "founding": true, // "found" is also the past of "find"
	"start": true, "started": true, "starting": true,
	"establish": true, "established": true,
	"launch": true, "launched": true,
	"create": true, "created": true,
	"opened": true, // "open" is also an adjective
	"begin":  true, "began": true, "begun": true,
	"incorporate": true, "incorporated": true,
	"born": true, "formed": true,
}

// pastAuxiliaries are the words after "when" of a question about the
// past, the only one whose verb of a beginning asks a year: "when was
// Acme founded?", "when did it start?", but not "when does my trial
// start?".
var pastAuxiliaries = map[string]bool{"was": true, "were": true, "did": true, "had": true, "has": true, "have": true}

// beginWindow is how many words after "when" and its auxiliary the verb
// of a beginning may come: "when did the company get started?".
const beginWindow = 4

// asksBegin reports whether words, those after a "when", are a clause
// about the past whose verb is one of a beginning (see beginAt) within
// beginWindow words of its auxiliary.
func asksBegin(words []string) bool {
	if len(words) == 0 || !pastAuxiliaries[words[0]] {
		return false
	}
	return beginIn(words[1:min(len(words), 1+beginWindow)]) >= 0
}

// beginLemmas and foundLemmas are the WordNet verbs of a beginning that
// have no other common sense, explicit lists: the begin verb group, of
// which one synonym says a beginning ("commenced" is "begin"), and those
// of founding, of which two do ("set up" is "establish" and "found",
// "instituted" too), as one may be a rarer sense ("lay down" a rule is
// "establish"). "start" and "launch" are in neither: WordNet's "start" is
// also an outset, a kickoff and a jump ("bug out", "bulge out"), and
// "launch" a boat's.
var (
	beginLemmas = []string{"begin", "commence"}
	foundLemmas = []string{"establish", "found", "institute"}
)

// beginAt returns how many words of a question's tokens at i say a
// beginning: 1 for a verb of one (beginVerbs, or a word whose WordNet
// synonyms say one (beginSynonyms: "commenced", "instituted"),
// 2 for a phrase of two whose one-word synonyms do ("set up", "start
// out"), else 0. A word that is more often the
// past of another verb (pastOfOther) is none.
func beginAt(toks []string, i int) int {
	w := toks[i]
	if i+1 < len(toks) && beginSynonyms(lexicon.PhraseSynonyms(w, toks[i+1])) {
		return 2
	}
	if beginVerbs[w] || !pastOfOther[w] && beginSynonyms(lexicon.Synonyms(w)) {
		return 1
	}
	return 0
}

// pastOfOther are the words WordNet gives a beginning as a synonym of
// that are more often the past of another verb, an explicit list: "when
// was the bug found?" asks when it was found, not founded.
var pastOfOther = map[string]bool{"found": true}

// beginSynonyms reports whether syn, a word's or a phrase's synonyms,
// say a beginning: one of beginLemmas or two of foundLemmas.
func beginSynonyms(syn []string) bool {
	n := 0
	for _, l := range foundLemmas {
		if slices.Contains(syn, l) {
			n++
		}
	}
	return n >= 2 || slices.ContainsFunc(beginLemmas, func(l string) bool { return slices.Contains(syn, l) })
}

// beginIn returns the index of the first word of toks that starts a
// verb of a beginning (see beginAt), or -1.
func beginIn(toks []string) int {
	for i := range toks {
		if beginAt(toks, i) > 0 {
			return i
		}
	}
	return -1
}

// sizeNouns are the words of a body of people or things whose size is a
// count: "how big is the staff?", "the size of the customer base".
var sizeNouns = []string{"staff", "team", "workforce", "headcount", "employ", "personnel", "people", "customer", "client", "base", "compan", "business", "user", "organi", "firm"}

// askedKind returns the kind of value the question (its tokens) asks
// for, or kindNone.
func askedKind(qwords []string) answerKind {
	for i, w := range qwords {
		next := ""
		if i+1 < len(qwords) {
			next = qwords[i+1]
		}
		switch {
		case (w == "what" || w == "which") && (next == "year" || next == "years"):
			// "In what year was the company formed?" asks the year of
			// a beginning, as "when was it formed?" does.
			// The same clause about the past as after "when": "in what
			// year does my contract start?" asks no beginning of the past.
			if asksBegin(qwords[i+2:]) {
				return kindBegin
			}
			return kindYear
		case w == "how" && next == "old", w == "since" && next == "when":
			return kindYear
		case w == "when" && asksBegin(qwords[i+1:]):
			return kindBegin
		case w == "how" && next == "many" && !(i+2 < len(qwords) && timeUnits[unitOf(qwords[i+2])]):
			return kindCount // "how many hours" asks a duration
		case w == "number" && next == "of", w == "headcount":
			return kindCount
		case w == "how" && (next == "big" || next == "large") && sizeOf(qwords[i+2:], true),
			w == "size" && next == "of" && sizeOf(qwords[i+2:], false):
			return kindCount
		}
	}
	return kindNone
}

// sizeDeterminers are the words between "how big is" or "the size of"
// and the noun whose size is asked.
var sizeDeterminers = map[string]bool{"is": true, "are": true, "was": true, "the": true, "your": true, "our": true,
	"its": true, "their": true, "acme": true, "acme's": true, "analytics": true, "analytics'": true, "company's": true}

// sizeOf reports whether words, those after "how big" (verb is true:
// "is the staff") or "the size of" ("your customer base"), name a body
// whose size is a count (sizeNouns): the first word after the verb and
// determiners, which ends the question or a phrase ("the team at Acme");
// "how big is the Business plan's query limit?" asks no count.
func sizeOf(words []string, verb bool) bool {
	i := 0
	// Another owner's possessive before the noun ("how big is Globex's
	// staff?") is a determiner too: the count is asked of what it owns,
	// and the passages must count that (see answersAsked), not ours.
	for i < len(words) && (sizeDeterminers[words[i]] || possessive(words[i]) && i+1 < len(words) && hasPrefix(words[i+1:i+2], sizeNouns...)) {
		i++
	}
	if i == len(words) || verb && i == 0 || !hasPrefix(words[i:i+1], sizeNouns...) || strings.HasSuffix(words[i], "'s") {
		return false
	}
	return i+1 == len(words) || topicPrepositions[words[i+1]] || hasPrefix(words[i+1:i+2], sizeNouns...)
}

// possessive reports whether w, a question's token, is a possessive
// ("globex's", "initech’s").
func possessive(w string) bool {
	return strings.HasSuffix(w, "'s") || strings.HasSuffix(w, "’s")
}

// yearRE matches a year of the calendar written alone: not a version
// ("2026.10"), a price or a count with a thousands separator.
var yearRE = regexp.MustCompile(`(?:^|[^\d$.,])((?:19|20)\d\d)(?:[^\d.,]|[.,](?:\s|$)|$)`)

// countRE matches a count: a number that is no price, share, version,
// time of day, part of a name or code ("24/7", "AES-256") or year,
// followed by a word ("2,300 customers", "about 140 employees").
var countRE = regexp.MustCompile(`(?:^|[^\d$.,:/-])(\d{1,3}(?:,\d{3})+|\d+)\s+([a-z]+)`)

// afterIdentifier reports whether the number at s[i:] follows an
// identifier in capitals ("SOC 2", "ISO 27001", "HTTP 429"), whose
// number names a standard or a code, not a count.
func afterIdentifier(s string, i int) bool {
	before := strings.TrimRight(s[:i], " ")
	j := strings.LastIndexByte(before, ' ') + 1
	w := before[j:]
	return len(w) >= 2 && strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

// namesKind reports whether a sentence holds a value of the kind.
func namesKind(k answerKind, s string) bool {
	switch k {
	case kindYear:
		return yearRE.MatchString(s)
	case kindBegin:
		// The year of a beginning, in whatever verb of one: "founded in
		// 2019" answers "when did Acme get started?", but "starts at
		// $30,000 per year" names no year.
		return yearRE.MatchString(s) && slices.ContainsFunc(tokens(s), beginVerb)
	case kindCount:
		lower := strings.ToLower(s) // the same length: ASCII letters change case
		for _, ix := range countRE.FindAllStringSubmatchIndex(lower, -1) {
			num, word := lower[ix[2]:ix[3]], lower[ix[4]:ix[5]]
			if yearRE.MatchString(num) && !strings.Contains(num, ",") {
				continue
			}
			if u := unitOf(word); timeUnits[u] || measureUnits[u] || stopwords[word] {
				continue // a duration or a size: no count of things
			}
			if len(lower) == len(s) && afterIdentifier(s, ix[2]) {
				continue
			}
			return true
		}
	}
	return false
}

// beginVerb reports whether w is a verb of a beginning (beginVerbs) that a
// question asking kindBegin uses for the beginning it asks the year of:
// the kind of answer, not its focus (see focusWords).
func beginVerb(w string) bool {
	return beginVerbs[w] || beginVerbs[strings.TrimSuffix(w, "s")] || beginVerbs[strings.TrimSuffix(w, "es")]
}

// valueTopK is how many passages a search asks for when the question
// asks a count or a year: the passage that gives one may name the thing
// asked in other words and rank below five that share the question's
// words.
const valueTopK = 10

// beginForms are the words a document says a beginning in, searched for
// with a question that asks the year of one (kindBegin): "when did Acme
// get started?" finds "founded in 2019".
var beginForms = []string{"founded", "established", "launched", "started"}

// beginQuery returns a search query with the words of a beginning that
// it lacks.
func beginQuery(query string) string {
	have := tokens(query)
	for _, f := range beginForms {
		if !slices.ContainsFunc(have, func(w string) bool { return sameStem(w, stem(f)) }) {
			query += " " + f
		}
	}
	return query
}

// countQuery returns a search query, for a question that asks a count
// (kindCount), with the countNouns of the noun counted (see askedNoun),
// the words of a business a document counts by: "how
// many workers does Acme have?" searches "employee" too, as the
// passages may count "about 140 employees".
func countQuery(q, query string) string {
	n := askedNoun(q)
	if n == "" {
		return query
	}
	have := tokens(query)
	for _, r := range countNouns(n) {
		if !slices.ContainsFunc(have, func(w string) bool { return sameStem(w, stem(r)) }) {
			query += " " + r
			have = append(have, r)
		}
	}
	return query
}

// countNouns returns the one-word nouns a count of which counts n, a
// noun a question asks the count of, other than n itself: its synonyms
// in WordNet or in everyday use (see lexicon.Synonyms and
// lexicon.Usage: "customer" of "clients", "employee" of "workers"). A
// noun WordNet only relates to n is none: "employee" is more general
// than "clerk", and "about 140 employees" says nothing of how many
// clerks there are.
func countNouns(n string) []string {
	var out []string
	s := stem(n)
	for _, r := range slices.Concat(lexicon.Synonyms(n), lexicon.Usage(n)) {
		if !strings.Contains(r, " ") && stem(r) != s && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// countsNoun reports whether a sentence (s) holds a count of the noun n
// or of one of its countNouns: "Acme Pipelines copies data from more
// than 120 sources" counts no clients, whatever else it says of
// customers.
func countsNoun(s, n string) bool {
	nouns := append([]string{n}, countNouns(n)...)
	lower := strings.ToLower(s)
	for _, m := range countRE.FindAllStringSubmatch(lower, -1) {
		if slices.ContainsFunc(nouns, func(x string) bool { return sameStem(m[2], stem(x)) }) {
			return true
		}
	}
	return false
}

// givesKind reports whether a sentence gives the kind of value asked
// about the question's focus. A count asked of a noun (noun, see
// askedNoun; "" for none) is one of it or of one of its countNouns. A year (kindYear, kindBegin) is the year of
// what the sentence's subject names, before its verb of a beginning, or
// else before the year: "Acme Analytics was founded in 2019 in Lisbon
// and has ... employees in Toronto and Singapore" gives the year of Acme,
// not of its Singapore team. With no focus, or one that only names the
// company (companyNouns), the subject may be anything; a focus word
// beside the company's ("when did the company begin operating in
// Singapore?") must be in the subject.
func givesKind(k answerKind, text string, focus []string, noun string) bool {
	if !namesKind(k, text) || k == kindCount && noun != "" && !countsNoun(text, noun) {
		return false
	}
	if k != kindBegin && k != kindYear || len(focus) == 0 {
		return true
	}
	toks := tokens(text)
	i := slices.IndexFunc(toks, beginVerb)
	if i < 0 {
		i = slices.IndexFunc(toks, func(w string) bool { return yearRE.MatchString(w) })
	}
	if i < 0 {
		i = len(toks)
	}
	// The measure asked ("year" of "what year was the firm set up?") is
	// the kind of value, which the year gives, not what it is of.
	others := slices.DeleteFunc(slices.Clone(focus), func(w string) bool { return companyNouns[w] || measureWord(w) })
	return len(others) == 0 || slices.ContainsFunc(others, func(w string) bool { return matches(w, toks[:i]) })
}

// companyNouns are the words a question names the company by, whose
// documents all are about it: "how old is the company?" asks the year of
// whatever subject the documents give one of.
var companyNouns = map[string]bool{"company": true, "business": true, "firm": true, "organisation": true, "organization": true}
