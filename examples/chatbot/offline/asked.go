package offline

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/knowledge"
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
	valueAgent              // "who founded X?", "who is the CEO?": a person or body that did or holds it
)

// moneyWords are the stems of the words of an amount of money that any
// amount answers: a price, a cost, a fee, a charge. A word is one of them
// when its stem is, whole: "feedback" is no fee, "Salesforce" no sales.
var moneyWords = []string{"price", "cost", "charg", "fee"}

// ownMoneyWords are the stems of the nouns of an amount of money of one
// kind (what a company earns, is worth or raised, what someone is paid):
// an amount answers them only in a sentence that names the kind, as
// "$10,000" of an invoice is no company's revenue.
var ownMoneyWords = []string{"revenu", "incom", "turnov", "profit", "earn", "salari", "salar", "wage", "valuat", "fund", "sale"}

// moneyVerbs are the verbs of paying that make "what do ..." and "how
// much ..." ask an amount: "what does X cost?", "how much do I pay?".
var moneyVerbs = []string{"cost", "costs", "charge", "charges", "pay", "paid", "spend", "spent", "owe", "bill", "billed"}

// isMoneyWord reports whether a word's stem is one of stems, whole.
func isMoneyWord(w string, stems []string) bool {
	return slices.Contains(stems, stem(strings.Trim(w, "$%")))
}

// anyMoney reports whether w is a word of money of either kind.
func anyMoney(w string) bool { return isMoneyWord(w, moneyWords) || isMoneyWord(w, ownMoneyWords) }

// npStops end the noun phrase after "what is": "the price of X" is asked
// as "the price".
var npStops = map[string]bool{"of": true, "for": true, "on": true, "in": true, "with": true, "per": true, "to": true,
	"from": true, "at": true, "by": true, "and": true, "or": true, "if": true, "when": true, "besides": true}

// asksMoney reports whether a question (its tokens) asks an amount of
// money as the thing it asks: "how much" with a word of money or of
// paying ("how much do I pay"); "what"/"which" followed by a word of money
// ("which fees apply?"), by "is"/"are" and a noun phrase holding one
// ("what is the price of X?", "what is Acme's annual revenue?"), or by
// "do"/"does" and a verb of paying ("what does X cost?"). A money word
// elsewhere does not make money the thing asked: "what metrics can
// Forecast predict besides revenue?" asks metrics. A yes-or-no question
// ("is there a charge for viewers?") asks none. Only the first "how much"
// and the first "what"/"which" are read, so the scan is linear.
func asksMoney(toks []string) bool {
	howMuch, what := false, false
	for i, w := range toks {
		switch {
		case w == "how" && i+1 < len(toks) && toks[i+1] == "much" && !howMuch:
			howMuch = true
			// "How much do I pay for ...?", "how much funding ...?"
			for _, x := range toks[i+2:] {
				if anyMoney(x) || slices.Contains(moneyVerbs, x) {
					return true
				}
			}
		case (w == "what" || w == "which") && !what:
			what = true
			if whatMoney(toks[i+1:]) {
				return true
			}
		}
	}
	return false
}

// whatMoney reports whether the words after "what" or "which" ask an
// amount of money (see asksMoney).
func whatMoney(rest []string) bool {
	if len(rest) == 0 {
		return false
	}
	switch rest[0] {
	case "is", "are", "was", "were", "s", "'s":
		for _, x := range rest[1:] {
			if npStops[x] {
				return false
			}
			if anyMoney(x) {
				return true
			}
		}
		return false
	case "do", "does", "did", "will", "would", "should", "can", "could":
		for _, x := range rest[1:] {
			if slices.Contains(moneyVerbs, x) || x == "charged" {
				return true
			}
		}
		return false
	}
	return anyMoney(rest[0])
}

// asksPercent reports whether a question (its tokens) asks a
// percentage: "what percentage", "which share of", "what proportion",
// "what is Acme's market share?".
func asksPercent(toks []string) bool {
	for i := 1; i < len(toks); i++ {
		if hasAny(toks[i-1:i], "what", "which") && hasAny(toks[i:i+1], percentNouns...) {
			return true
		}
	}
	// "What is Acme's market share?": a noun of a percentage ends the
	// noun phrase after "what is".
	i := slices.Index(toks, "what")
	if i < 0 || i+2 >= len(toks) || !hasAny(toks[i+1:i+2], "is", "are", "was", "s", "'s") {
		return false
	}
	for j := i + 2; j < len(toks) && !npStops[toks[j]]; j++ {
		if slices.Contains(percentNouns, toks[j]) && (j+1 == len(toks) || npStops[toks[j+1]]) {
			return true
		}
	}
	return false
}

// pastWhen reports whether a question (its tokens) asks when something
// happened: "when" with an auxiliary of the past ("when did Acme open its
// Toronto office?", "when was the API launched?"), which a date or a year
// answers. "When does a downgrade take effect?" asks no past time.
func pastWhen(toks []string) bool {
	i := slices.Index(toks, "when")
	return i >= 0 && i+1 < len(toks) && hasAny(toks[i+1:i+2], "did", "was", "were")
}

// valueAsked returns the kind of value a question asks for, or
// valueNone.
func valueAsked(q string) valueKind {
	toks := tokens(q)
	if asksAgent(toks) {
		return valueAgent
	}
	switch askedKind(toks) {
	case kindYear, kindBegin:
		return valueYear
	case kindCount:
		return valueCount
	}
	switch {
	case pastWhen(toks):
		return valueYear
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
		// Any count: the focus, names left out (see answersAsked),
		// judges whether it counts the thing asked ("2,300 customers" of
		// "how many organisations").
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

// maxNames caps the things a question is read to name: a long message
// of many capitalised words costs no more than this many names.
const maxNames = 8

// namedThings returns the things a question names, each by the words of
// its name in lower case, joined by spaces: a run of words written with a
// capital after the question's first word ("When was Globex BI founded?"
// names "globex"; "Business Plus plan" "business plus"), a competitor
// however written, a name of the documents' own (nameWords) written in
// lower case before a plan noun ("the business plan"), and a word after
// the company's own name after a preposition ("the price of acme chat"
// names "chat"). Not the company's
// own name (ownNames), an acronym ("HQ", "API": what is asked, not of
// what), "I", nor a capitalised common word (see namesIn). At most
// maxNames, each once.
func namedThings(q string) []string {
	var out []string
	seen := map[string]bool{}
	var run []string
	flush := func() {
		if len(run) > 0 && len(out) < maxNames {
			if n := strings.Join(run, " "); !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
		run = run[:0]
	}
	trim := func(raw string) string {
		f := strings.TrimFunc(raw, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		return strings.TrimSuffix(strings.TrimSuffix(f, "'s"), "’s")
	}
	names := namesIn(q)
	fields := strings.Fields(q)
	k := 0 // the next of names to meet
	sentenceStart := true
	afterOwn := false // the word before was the company's own name after a preposition, not possessive
	prev := ""        // the word before, in lower case
	for i, raw := range fields {
		f := trim(raw)
		l := strings.ToLower(f)
		first := sentenceStart
		sentenceStart = strings.ContainsAny(raw[len(raw)-1:], ".!?") && !abbreviationDots[strings.ToLower(raw)]
		name := !first && k < len(names) && strings.TrimSuffix(strings.TrimSuffix(names[k], "'s"), "’s") == f
		if name {
			k++
		}
		beforePlan := i+1 < len(fields) && slices.Contains(planNouns, strings.ToLower(trim(fields[i+1])))
		switch {
		case slices.Contains(competitorNames, l):
			if len(run) == 0 || !slices.Contains(competitorNames, run[0]) {
				flush()
				run = append(run, l)
			}
		case ownNames[l] || name && isAcronym(f):
			// Part of a name but not the word it is named by: "Acme
			// Chat" is named by "Chat", "Globex BI" by "Globex".
		case name,
			l != "" && slices.Contains(nameWords, l) && beforePlan,
			afterOwn && l != "" && !stopwords[l] && !frameWords[l] && !anyMoney(l) && unicode.IsLetter(rune(l[0])):
			run = append(run, l)
		default:
			flush()
		}
		afterOwn = ownNames[l] && !strings.ContainsAny(raw, "'’") && (afterOwn || nounLeads[prev])
		prev = l
		if strings.ContainsAny(raw[len(raw)-1:], ",;:.!?") {
			flush()
		}
	}
	flush()
	return out
}

// nounLeads are the words after which the company's own name starts a
// noun ("the price of acme chat"), not a subject ("when did acme begin").
// An article is none: "an acme deployment" is a deployment of the
// company's, no product.
var nounLeads = map[string]bool{"of": true, "for": true, "about": true, "with": true, "on": true, "in": true, "to": true, "from": true}

// forEveryPlan reports whether a sentence (its tokens) states a fact for
// every plan: "every", "all", "each" or "any" before a plan noun.
func forEveryPlan(toks []string) bool {
	for i := 1; i < len(toks); i++ {
		if slices.Contains(planNouns, toks[i]) && hasAny(toks[i-1:i], "every", "all", "each", "any") {
			return true
		}
	}
	return false
}

// inNames reports whether w is a word of one of names.
func inNames(w string, names []string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(strings.Fields(n), w) })
}

// namesAny reports whether a sentence or its heading names one of names,
// or names is empty: every word of a name; a sentence stated for every
// plan ("every plan", "all plans", see forEveryPlan) names each of the
// documents' names (nameWords) when plansAlike: not for a price, which
// each plan has its own ("viewers are free on every plan" is no price of
// a Business seat) ("business plus" is not named
// by "Business costs $89").
func namesAny(s sentence, names []string, plansAlike bool) bool {
	if len(names) == 0 {
		return true
	}
	every := plansAlike && forEveryPlan(s.toks)
	return slices.ContainsFunc(names, func(n string) bool {
		if every && slices.Contains(nameWords, n) && !ownNames[n] {
			return true // "Every plan starts with a 14-day free trial" holds for Starter
		}
		for w := range strings.FieldsSeq(n) {
			if !matches(w, s.toks) && !matches(w, s.heading) {
				return false
			}
		}
		return true
	})
}

// holdsOwnMoney reports whether a sentence or its heading names the kind
// of amount a question asks (ownMoneyWords in qtoks): "revenue" of "what
// is Acme's annual revenue?", "funding" of a passage headed "Funding"
// that says "raised $60 million". A question that asks a plain price is
// held by any sentence.
func holdsOwnMoney(qtoks []string, s sentence) bool {
	for _, w := range qtoks {
		if isMoneyWord(w, ownMoneyWords) && !matches(w, s.toks) && !matches(w, s.heading) {
			return false
		}
	}
	return true
}

// percentNouns are the nouns of a percentage a question may ask as the
// head of its noun phrase: "what is Acme's market share?".
var percentNouns = []string{"percentage", "percent", "share", "proportion", "fraction"}

// plainModifiers are the adjectives before a word of money or of a
// percentage that say which amount of the thing is asked, not what
// thing: "the monthly price of Team", "the total cost". General English.
var plainModifiers = map[string]bool{"monthly": true, "annual": true, "yearly": true, "weekly": true, "daily": true,
	"hourly": true, "total": true, "list": true, "full": true, "exact": true, "current": true, "base": true, "starting": true,
	"lowest": true, "highest": true, "cheapest": true, "minimum": true, "maximum": true, "average": true, "typical": true,
	"usual": true, "real": true, "actual": true, "extra": true, "additional": true, "overall": true, "standard": true,
	"regular": true, "normal": true, "new": true, "old": true, "latest": true, "entry": true}

// pricedWords returns the words of what a question that asks an amount
// of money or a percentage (k; its tokens) asks it of, other than
// names: mods, the modifier of its noun of money or of a percentage
// ("stock" of "what is Acme's stock price?", "market" of "what is
// Acme's market share?"), which the sentence that gives the value must
// hold; subject, that of its verb of paying ("hardware appliance" of
// "how much does Acme's hardware appliance cost?"), which the results
// must hold. Function words, possessives, the documents' names
// (nameWords, competitors, the company's own), plain adjectives
// (plainModifiers) and other words of money are none, nor, in the
// subject, a plan noun ("the Team plan").
func pricedWords(k valueKind, toks []string) (mods, subject []string) {
	skip := func(w string, out []string) bool {
		return stopwords[w] || possessive(w) || ownNames[w] || slices.Contains(nameWords, w) || slices.Contains(competitorNames, w) ||
			plainModifiers[w] || anyMoney(w) || slices.Contains(moneyVerbs, w) || strings.ContainsAny(w, "0123456789$%") || slices.Contains(out, w)
	}
	for i, w := range toks {
		switch {
		case i > 0 && (k == valueMoney && isMoneyWord(w, moneyWords) && !slices.Contains(moneyVerbs, w) ||
			k == valuePercent && slices.Contains(percentNouns, w)):
			// A noun of money or of a share after its modifier: "stock
			// price", "market share".
			if m := toks[i-1]; !skip(m, mods) {
				mods = append(mods, m)
			}
		case k == valueMoney && slices.Contains(moneyVerbs, w) && i > 1:
			// The subject between "does" and the verb: "how much does
			// the hardware appliance cost?".
			j := i - 1
			for j > 0 && !hasAny(toks[j:j+1], "do", "does", "did", "will", "would") {
				j--
			}
			if j == 0 {
				continue
			}
			for _, x := range toks[j+1 : i] {
				if x == "i" || x == "we" || x == "you" {
					break // "how much do I pay": no thing
				}
				if !skip(x, subject) && !slices.Contains(planNouns, x) {
					subject = append(subject, x)
				}
			}
		}
	}
	return mods, subject
}

// holdsPriced reports whether the results hold each word of what a
// question asks the amount of (the subject of pricedWords), as written
// or by a synonym: the cost of a hardware appliance is not answered by
// that of a seat.
func holdsPriced(q string, qtoks []string, rs []result) bool {
	_, subject := pricedWords(valueMoney, qtoks)
	if len(subject) == 0 {
		return true
	}
	names := namedThings(q) // held or not as the names' gate judges (answersAsked)
	all := resultWords(rs)
	syn := expandWords(q, contentWords(q), all)
	for _, w := range subject {
		if !inNames(w, names) && !matches(w, all) && !syn.match(w, all) {
			return false
		}
	}
	return true
}

// holdsModifiers reports whether a sentence or its heading holds each
// modifier of the noun of money or of a percentage a question asks (mods,
// see pricedWords), as written or by a synonym in syn: "What is
// Northwind's share price?" is not answered by its plan's price, nor
// "what is Acme's market share?" by a discount.
func holdsModifiers(mods []string, syn expanded, s sentence) bool {
	for _, w := range mods {
		if !matches(w, s.toks) && !matches(w, s.heading) && !syn.sure(w, s.toks) && !syn.sure(w, s.heading) {
			return false
		}
	}
	return true
}

// answersAsked reports whether the results answer what the question asks
// of what it names: when it asks a kind of value (see valueAsked), a
// sentence of the results names one of the things it names (namedThings;
// any sentence, when it names none) and gives a value of that kind
// (answersIn); when it asks none, each thing it names is named somewhere
// in the results. "When was Globex BI founded?" is not answered by
// passages about Globex with no year, nor "what is the price of Acme
// Chat?" by the prices of other products.
func answersAsked(q string, rs []result) bool {
	names := namedThings(q)
	k := valueAsked(q)
	var (
		focus, qtoks, mods []string
		noun               string
		things             map[string]bool
		syn                expanded
	)
	if k != valueNone {
		words := contentWords(q)
		focus, noun, qtoks = focusWords(q, words), askedNoun(q), tokens(q)
		if k == valuePlace {
			things = thingNames(rs)
			for _, m := range months {
				things[m] = true // "from October" names a time
			}
		}
		if k == valueMoney || k == valuePercent {
			mods, _ = pricedWords(k, qtoks)
			if len(mods) > 0 {
				syn = expandWords(q, words, resultWords(rs))
			}
		}
		if k == valueCount {
			syn = expandWords(q, words, resultWords(rs))
			// The thing named is held by namesAny; the focus is what
			// is counted of it: the name alone near a number ("Forecast
			// ... 5 minutes") counts no customers of it.
			focus = slices.DeleteFunc(slices.Clone(focus), func(w string) bool { return inNames(w, names) })
		}
	}
	answered := func(name []string) bool {
		for _, r := range rs {
			for _, s := range sentencesOf(r.text) {
				if k == valueNone && namesAny(s, name, true) || k != valueNone && answersIn(s, k, name, focus, noun, qtoks, things, syn) && holdsModifiers(mods, syn, s) {
					return true
				}
			}
		}
		return false
	}
	if k != valueNone && !answered(names) {
		return false
	}
	if k == valueMoney && !holdsPriced(q, qtoks, rs) {
		return false
	}
	// A thing that is no name of the documents' own (a competitor, a
	// partner) is answered only where the results speak of it: by the
	// passage about it, or, named only in passing, by the sentence that
	// names it or one beside it, holding at least half of what is asked
	// of it (see namedWith): "What uptime does Northwind guarantee?" is
	// not answered by our own uptime with Northwind's prices elsewhere,
	// nor a count of a partner's sites by a count of our sources that
	// lists the partner. A value asked of several things is answered by
	// that of one ("What do Pipelines and Forecast cost?": the answer
	// says what it found); whether each is there ("do you support
	// Snowflake and Redshift?") by every one.
	var asked []string
	found := false
	for _, n := range names {
		if k == valueNone && !answered([]string{n}) {
			return false
		}
		if !slices.ContainsFunc(strings.Fields(n), func(w string) bool { return slices.Contains(nameWords, w) }) {
			if asked == nil {
				words := contentWords(q)
				// What is asked of it: its focus, but for the names and
				// the verb that asks whether it is connected ("support"
				// of "do you support Snowflake?", see relevanceWords).
				rel := relevanceWords(q)
				asked = slices.DeleteFunc(focusWords(q, words), func(w string) bool { return inNames(w, names) || !slices.Contains(rel, w) })
				syn = expandWords(q, words, resultWords(rs))
			}
			counted := ""
			if k == valueCount {
				counted = askedNoun(q)
			}
			if len(asked) > 0 && !namedWith(rs, n, asked, counted, syn) {
				if k == valueNone {
					return false
				}
				continue
			}
		}
		if k == valueNone || answered([]string{n}) {
			found = true
		}
	}
	return found || len(names) == 0
}

// namedWith reports whether the results speak of the thing n with what
// the question asks of it: a sentence names n (see namesAny) and, with
// the sentences of its passage when the passage's heading names n (the
// passage is about n) or else with the sentences beside it in its
// passage (n named in passing: "Pipelines reads Salesforce accounts.
// They sync every 15 minutes."), holds at least half of the words of
// asked, as written or by a synonym (see coversFocus), and, when the
// question asks a count of the noun counted, counts it (see
// countsNoun): "more than 120 sources" that lists a partner counts no
// warehouses of the partner's.
func namedWith(rs []result, n string, asked []string, counted string, syn expanded) bool {
	for _, r := range rs {
		ss := sentencesOf(r.text)
		for i, s := range ss {
			if !namesAny(s, []string{n}, true) {
				continue
			}
			lo, hi := i, i+1
			about := namesAny(sentence{heading: s.heading}, []string{n}, false)
			for lo > 0 && ss[lo-1].where == s.where && (about || lo == i) {
				lo--
			}
			for hi < len(ss) && ss[hi].where == s.where && (about || hi == i+1) {
				hi++
			}
			near := ss[lo:hi]
			if counted != "" && !slices.ContainsFunc(near, func(x sentence) bool { return countsNoun(x.text, counted) }) {
				continue
			}
			held := 0
			for _, w := range asked {
				if slices.ContainsFunc(near, func(x sentence) bool { return coversFocus([]string{w}, syn, x.toks, x.heading) }) {
					held++
				}
			}
			if 2*held >= len(asked) {
				return true
			}
		}
	}
	return false
}

// answersIn reports whether one sentence gives a value of the kind asked
// (k) of one of the things the question names (names; any, when none):
// it names one, gives such a value (givesValue), and, for a count, holds
// a word of the focus ("10,000 rows per page" counts no customers), for
// an amount of money of a kind of its own, names that kind
// (holdsOwnMoney).
func answersIn(s sentence, k valueKind, names, focus []string, noun string, qtoks []string, things map[string]bool, syn expanded) bool {
	return namesAny(s, names, k != valueMoney) && givesValue(k, s, focus, noun, things) &&
		(k != valueMoney || holdsOwnMoney(qtoks, s)) &&
		(k != valueAgent || givesAgent(qtoks, s)) &&
		(k != valueCount || coversFocus(focus, syn, s.toks, s.heading))
}

// valueTerms are the words a search for a kind of value adds to the name
// of the thing it is asked of (see narrowQuery).
var valueTerms = map[valueKind]string{
	valueYear: "founded year", valueCount: "number", valueMoney: "price costs", valuePercent: "percent",
	valueDuration: "time", valuePlace: "located", valueAgent: "founder",
}

// deepTopK is how many passages a deeper search for a count asks for:
// the most search_knowledge returns.
const deepTopK = knowledge.MaxTopK

// deeperQuery returns a second query for the knowledge base (the tool
// named internal) when a question asks a count of a noun (askedNoun)
// and names nothing (see narrowQuery for a named thing): the noun and
// the nouns a count of which counts it (countQuery), to be searched
// for deepTopK passages. A noun the documents use in many passages
// ("customers") ranks the one passage that counts it below those that
// only mention it, and a synonym held in another sense ("Clients should
// back off") above it. ok is false when no usable result holds the noun
// or one of its count nouns (the documents are not about it), a result
// counts it, or the knowledge base has been called more than once
// already.
func deeperQuery(q string, rs []result, internal string) (query string, ok bool) {
	n := askedNoun(q)
	if n == "" || valueAsked(q) != valueCount || len(namedThings(q)) > 0 {
		return "", false
	}
	calls := 0
	for _, r := range rs {
		if r.source == internal {
			calls++
		}
	}
	usable := usableResults(rs)
	if calls != 1 || answersAsked(q, usable) {
		return "", false
	}
	nouns := append([]string{n}, countNouns(n)...)
	held := slices.ContainsFunc(resultWords(usable), func(t string) bool {
		return slices.ContainsFunc(nouns, func(x string) bool { return sameStem(t, stem(x)) })
	})
	if !held {
		return "", false
	}
	return countQuery(q, n), true
}

// narrowQuery returns a second query for the knowledge base (the tool
// named internal) when a question asks a kind of value of the things it
// names and no usable result gives one (answersAsked is false): the names
// and the words of that kind of value ("business price costs" for "how
// much do I pay for a Business seat each month?"), whose passages the
// question's other words ("seat", "month") may have ranked below others.
// ok is false when the question names nothing, asks no value, a result
// gives the value, or the knowledge base has been called more than once
// already: the narrow search runs once, whether it answered, failed or
// timed out, and the web is tried next.
func narrowQuery(q string, rs []result, internal string) (query string, ok bool) {
	k, names := valueAsked(q), namedThings(q)
	if k == valueNone || len(names) == 0 {
		return "", false
	}
	calls := 0
	for _, r := range rs {
		if r.source == internal {
			calls++
		}
	}
	if calls != 1 || answersAsked(q, usableResults(rs)) {
		return "", false
	}
	return strings.Join(names, " ") + " " + valueTerms[k], true
}
