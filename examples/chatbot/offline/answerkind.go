package offline

import (
	"regexp"
	"slices"
	"strings"
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

// beginVerbs are the stems of verbs of a beginning, whose "when" asks a
// year ("when was Acme founded?", "when did it get started?"); "when
// does a downgrade take effect?" asks no year.
var beginVerbs = []string{"found", "start", "establish", "launch", "creat", "open", "began", "begin", "incorporat", "born", "formed"}

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
			return kindYear
		case w == "how" && next == "old", w == "since" && next == "when":
			return kindYear
		case w == "when" && hasPrefix(qwords[i+1:], beginVerbs...):
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
	for i < len(words) && sizeDeterminers[words[i]] {
		i++
	}
	if i == len(words) || verb && i == 0 || !hasPrefix(words[i:i+1], sizeNouns...) || strings.HasSuffix(words[i], "'s") {
		return false
	}
	return i+1 == len(words) || topicPrepositions[words[i+1]] || hasPrefix(words[i+1:i+2], sizeNouns...)
}

// yearRE matches a year of the calendar written alone: not a version
// ("2026.10"), a price or a count with a thousands separator.
var yearRE = regexp.MustCompile(`(?:^|[^\d$.,])((?:19|20)\d\d)(?:[^\d.,]|[.,](?:\s|$)|$)`)

// countRE matches a count: a number that is no price, share, version,
// time of day or year, followed by a word ("2,300 customers", "about
// 140 employees").
var countRE = regexp.MustCompile(`(?:^|[^\d$.,:])(\d{1,3}(?:,\d{3})+|\d+)\s+([a-z]+)`)

// namesKind reports whether a sentence holds a value of the kind.
func namesKind(k answerKind, s string) bool {
	switch k {
	case kindYear:
		return yearRE.MatchString(s)
	case kindBegin:
		// The year of a beginning, in whatever verb of one: "founded in
		// 2019" answers "when did Acme get started?", but "starts at
		// $30,000 per year" names no year.
		return yearRE.MatchString(s) && hasPrefix(tokens(s), beginVerbs...)
	case kindCount:
		for _, m := range countRE.FindAllStringSubmatch(strings.ToLower(s), -1) {
			if yearRE.MatchString(m[1]) && !strings.Contains(m[1], ",") {
				continue
			}
			if u := unitOf(m[2]); timeUnits[u] || measureUnits[u] || stopwords[m[2]] {
				continue // a duration or a size: no count of things
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
	return hasPrefix([]string{w}, beginVerbs...)
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

// givesKind reports whether a sentence gives the kind of value asked
// about the question's focus. The year of a beginning is the beginning of
// what the sentence's subject names, before the verb: "Acme Analytics was
// founded in 2019 in Lisbon and has ... employees in Toronto" gives the
// year of Acme, not of its Toronto office. With no focus (the question
// asks of the company), the subject may be anything.
func givesKind(k answerKind, text string, focus []string) bool {
	if !namesKind(k, text) {
		return false
	}
	if k != kindBegin || len(focus) == 0 {
		return true
	}
	toks := tokens(text)
	i := slices.IndexFunc(toks, beginVerb)
	return slices.ContainsFunc(focus, func(w string) bool { return matches(w, toks[:i]) })
}
