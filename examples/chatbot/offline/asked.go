package offline

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// A question that asks a value of a kind (a year, a count, an amount of
// money, a percentage, a duration, a place) about a named thing (a
// competitor, a product, a plan, an office) is answered only by a
// sentence that gives a value of that kind and names that thing. Passages
// that share the question's words but not both are about something else:
// "Globex BI targets large enterprises" gives no year for "when was Globex
// BI founded?", and "Credit cards on all plans, and invoices ... above
// $10,000" no price of Snowflake's credits. The model then says it does
// not know rather than quote them (see answersAsked).

// valueKind is the kind of value a question asks for, as answersAsked
// checks it.
type valueKind int

const (
	valueNone     valueKind = iota
	valueYear               // "when was X founded?", "what year ..."
	valueCount              // "how many ..."
	valueMoney              // "how much does X cost?", "what is the price of X?"
	valuePercent            // "what percentage of ..."
	valueDuration           // "how long ...", "how fast ..."
	valuePlace              // "where ...", "which city ..."
)

// moneyWords are the stems of the words of an amount of money that any
// amount answers: a price, a cost, a fee, a charge.
var moneyWords = []string{"price", "pric", "cost", "charg", "fee", "rate"}

// ownMoneyWords are the nouns of an amount of money of one kind (what a
// company earns, is worth or raised, what someone is paid): an amount
// answers them only in a sentence that names the kind, as "$10,000" of
// an invoice is no company's revenue.
var ownMoneyWords = []string{"revenue", "income", "turnover", "profit", "earning", "salar", "wage", "valuation", "funding", "sales"}

// asksMoney reports whether a question (its tokens) asks an amount of
// money: "how much" with a word of money, or "what"/"which" with one
// ("what does X cost?", "what is the price of X?"). A yes-or-no question
// ("is there a charge for viewers?") asks none.
func asksMoney(toks []string) bool {
	if len(toks) == 0 || !slices.ContainsFunc(toks, func(w string) bool { return inGroup(w, moneyWords) || inGroup(w, ownMoneyWords) }) {
		return false
	}
	for i, w := range toks {
		if w == "how" && i+1 < len(toks) && toks[i+1] == "much" || w == "what" || w == "which" {
			return true
		}
	}
	return false
}

// asksPercent reports whether a question (its tokens) asks a
// percentage: "what percentage", "which share of", "what proportion".
func asksPercent(toks []string) bool {
	for i := 1; i < len(toks); i++ {
		if hasAny(toks[i-1:i], "what", "which") && hasAny(toks[i:i+1], "percentage", "percent", "proportion", "share", "fraction") {
			return true
		}
	}
	return false
}

// valueAsked returns the kind of value a question asks for, or
// valueNone.
func valueAsked(q string) valueKind {
	toks := tokens(q)
	switch askedKind(toks) {
	case kindYear, kindBegin:
		return valueYear
	case kindCount:
		return valueCount
	}
	switch {
	case asksPercent(toks):
		return valuePercent
	case asksDuration(toks):
		return valueDuration
	case asksMoney(toks):
		return valueMoney
	case asksPlace(q):
		return valuePlace
	}
	return valueNone
}

var (
	// moneyRE matches an amount of money, or a price said in words.
	moneyRE = regexp.MustCompile(`(?i)[$€£]\s?\d|\b\d[\d,.]*\s?(?:usd|eur|gbp|dollars?|euros?)\b|\bfree\b|\bcustom\b|\bno charge\b`)
	// percentRE matches a percentage.
	percentRE = regexp.MustCompile(`(?i)\d\s?%|\bper ?cent\b`)
	// parenPlaceRE matches a place named in parentheses: "EU (Frankfurt)".
	parenPlaceRE = regexp.MustCompile(`\(\p{Lu}\p{Ll}+\)`)
)

// givesValue reports whether a sentence gives a value of the kind asked:
// for a year, one about the question's focus (see givesKind), so that
// "Acme Analytics was founded in 2019 in Lisbon and has ... employees in
// Singapore" gives no year of a Singapore office.
func givesValue(k valueKind, s sentence, focus []string, noun string, names map[string]bool) bool {
	switch k {
	case valueYear:
		return givesKind(kindYear, s.text, focus, noun) || givesKind(kindBegin, s.text, focus, noun)
	case valueCount:
		// Any count: the passage rules judge whether it counts the
		// thing asked ("2,300 customers" of "how many organisations").
		return namesKind(kindCount, s.text)
	case valueMoney:
		return moneyRE.MatchString(s.text)
	case valuePercent:
		return percentRE.MatchString(s.text)
	case valueDuration:
		return namesDuration(s.text)
	case valuePlace:
		return namesPlace(s.text, names) || parenPlaceRE.MatchString(s.text)
	}
	return true
}

// months are the names of the months, which "in", "from" or "at" may
// name as they name a place.
var months = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september",
	"october", "november", "december"}

// ownNames are the words of the company's own name, which every document
// is about whether it repeats them or not.
var ownNames = map[string]bool{"acme": true, "analytics": true}

// namedThings returns the names a question gives, in lower case: its
// words written with a capital other than its first word ("When was
// Globex BI founded?" names "globex" and "bi"), and the competitors it
// names however written; not the company's own name (ownNames), nor "I".
// A name ends before "'s".
func namedThings(q string) []string {
	var out []string
	add := func(w string) {
		w = strings.ToLower(w)
		if w != "" && !ownNames[w] && w != "i" && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	first := true
	for _, f := range strings.FieldsFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == '/' || r == '(' || r == ')' || r == '"' }) {
		w := strings.TrimRight(f, ".,;:!?")
		end := w != f && strings.ContainsAny(f[len(w):], ".!?:;")
		w = strings.TrimRight(strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s"), "'’")
		r := []rune(w)
		switch {
		case len(r) == 0:
		case slices.Contains(competitorNames, strings.ToLower(w)):
			add(w)
		case !first && unicode.IsUpper(r[0]) && strings.IndexFunc(w, unicode.IsLetter) == 0:
			add(w)
		}
		first = end
	}
	return out
}

// namesAll reports whether a sentence or its heading names every one of
// names.
func namesAll(s sentence, names []string) bool {
	for _, n := range names {
		if !matches(n, s.toks) && !matches(n, s.heading) {
			return false
		}
	}
	return true
}

// holdsOwnMoney reports whether a sentence names the kind of amount a
// question asks (ownMoneyWords in qtoks): "revenue" of "what is Acme's
// annual revenue?". A question that asks a plain price is held by any
// sentence.
func holdsOwnMoney(qtoks []string, s sentence) bool {
	for _, w := range qtoks {
		if inGroup(w, ownMoneyWords) && !matches(w, s.toks) {
			return false
		}
	}
	return true
}

// answersAsked reports whether the results answer what the question asks
// of what it names: when it asks a kind of value (see valueAsked), a
// sentence of the results gives one (givesValue) and names every thing
// the question names (namedThings); when it asks none, every thing it
// names is named somewhere in the results. "When was Globex BI
// founded?" is not answered by passages about Globex with no year, nor
// "what is the price of Acme Chat?" by the prices of other products.
func answersAsked(q string, rs []result) bool {
	names := namedThings(q)
	k := valueAsked(q)
	if k == valueNone {
		if len(names) == 0 {
			return true
		}
		for _, r := range rs {
			for _, s := range sentencesOf(r.text) {
				if namesAll(s, names) {
					return true
				}
			}
		}
		return false
	}
	words := contentWords(q)
	focus, noun := focusWords(q, words), askedNoun(q)
	qtoks := tokens(q)
	var things map[string]bool
	if k == valuePlace {
		things = thingNames(rs)
		for _, m := range months {
			things[m] = true // "from October" names a time
		}
	}
	for _, r := range rs {
		for _, s := range sentencesOf(r.text) {
			if namesAll(s, names) && givesValue(k, s, focus, noun, things) && (k != valueMoney || holdsOwnMoney(qtoks, s)) {
				return true
			}
		}
	}
	return false
}
