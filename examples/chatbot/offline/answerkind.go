package offline

import (
	"regexp"
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
	kindYear             // a year: "what year", "how old", "when was it founded"
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
			return kindYear
		case w == "how" && next == "many" && !(i+2 < len(qwords) && timeUnits[unitOf(qwords[i+2])]):
			return kindCount // "how many hours" asks a duration
		case w == "number" && next == "of", w == "headcount":
			return kindCount
		case w == "how" && (next == "big" || next == "large") && hasPrefix(qwords[i+2:], sizeNouns...),
			w == "size" && hasPrefix(qwords[i+1:], sizeNouns...):
			return kindCount
		}
	}
	return kindNone
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
