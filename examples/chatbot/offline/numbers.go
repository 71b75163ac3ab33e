package offline

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// numberWords are the values of spelled-out numbers.
var numberWords = map[string]int{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
	"sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
	"hundred": 100, "thousand": 1000, "million": 1000000,
}

const numberWordAlt = `zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|` +
	`sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million`

// numberRunRE is a run of number words, joined by spaces, hyphens or "and"
// ("two hundred and five", "twenty-one"); spellNumbers splits a run at an
// "and" that joins two numbers ("three and four").
var numberRunRE = regexp.MustCompile(`\b(?:` + numberWordAlt + `)(?:(?:[\s-]+|\s+and\s+)(?:` + numberWordAlt + `))*\b`)

// spellNumbers writes the spelled-out numbers of s (lower case) as digits:
// "seven times six" is "7 times 6", "two hundred and five" is "205",
// "three and four" is "3 and 4". A number word that starts no number
// ("a hundred") is read with a one before it.
func spellNumbers(s string) string {
	return replaceAllFunc(numberRunRE, s, func(run string) string {
		var out []string
		total, cur, started := 0, 0, false
		flush := func() {
			if started {
				out = append(out, strconv.Itoa(total+cur))
			}
			total, cur, started = 0, 0, false
		}
		prevAnd := false
		for _, f := range strings.FieldsFunc(run, func(r rune) bool { return r == ' ' || r == '-' || r == '\t' || r == '\n' }) {
			if f == "and" {
				prevAnd = true
				continue
			}
			v := numberWords[f]
			switch {
			case v == 100:
				if cur == 0 {
					cur = 1
				}
				cur *= 100
			case v >= 1000:
				if cur == 0 && total == 0 {
					cur = 1
				}
				total += cur * v
				cur = 0
			default:
				// "and" continues a number only after a scale word
				// ("hundred and five"); a small number after a unit or
				// a teen ("one two", "three and four") starts a new one.
				last := cur % 100
				continues := started && (!prevAnd || (cur%100 == 0 && cur > 0) || (cur == 0 && total > 0))
				if continues && last != 0 && !(last >= 20 && last%10 == 0 && v < 10) {
					continues = false
				}
				if !continues {
					if prevAnd && started {
						flush()
						out = append(out, "and")
					} else {
						flush()
					}
				}
				cur += v
			}
			started = true
			prevAnd = false
		}
		flush()
		return strings.Join(out, " ")
	})
}

// temperatureRE is a temperature conversion: "100 fahrenheit to celsius",
// "convert 20°c into f", "how many degrees fahrenheit is 30 celsius".
var (
	temperatureRE    = regexp.MustCompile(`(-?\d+(?:\.\d+)?)\s*(?:°\s*|degrees?\s+)?(fahrenheit|celsius|centigrade|kelvin|f|c|k)\s+(?:in|into|to|as|is in)\s+(?:degrees?\s+)?(fahrenheit|celsius|centigrade|kelvin|f|c|k)\b`)
	temperatureAskRE = regexp.MustCompile(`how many (?:degrees?\s+)?(fahrenheit|celsius|centigrade|kelvin)\s+(?:is|are|makes?)\s+(-?\d+(?:\.\d+)?)\s*(?:°\s*|degrees?\s+)?(fahrenheit|celsius|centigrade|kelvin|f|c|k)\b`)
)

// temperature writes a temperature conversion as the calculator's
// expression, or returns "". Temperatures are not multiples of one
// another, so unlike conversion's units they need an offset.
func temperature(s string) string {
	var n, from, to string
	if g := temperatureRE.FindStringSubmatch(s); g != nil {
		n, from, to = g[1], g[2], g[3]
	} else if g := temperatureAskRE.FindStringSubmatch(s); g != nil {
		to, n, from = g[1], g[2], g[3]
	} else {
		return ""
	}
	scale := func(w string) byte {
		if w == "centigrade" {
			return 'c'
		}
		return w[0]
	}
	f, t := scale(from), scale(to)
	if f == t {
		return ""
	}
	if strings.HasPrefix(n, "-") {
		n = "(0" + n + ")"
	}
	var celsius string
	switch f {
	case 'f':
		celsius = "(" + n + " - 32) * 5 / 9"
	case 'k':
		celsius = n + " - 273.15"
	default:
		celsius = n
	}
	switch t {
	case 'f':
		return "(" + celsius + ") * 9 / 5 + 32"
	case 'k':
		return "(" + celsius + ") + 273.15"
	}
	return celsius
}

var (
	// calculationRE is the calculator's answer in a transcript's
	// "assistant:" line, and its value.
	calculationRE = regexp.MustCompile(`^assistant:\s*The calculator gives .* = (-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)\.?\s*$`)
	// leadRE are the words that open a follow-up: "and", "now", "then".
	leadRE = regexp.MustCompile(`^(?:(?:and|now|then|ok|okay|so|next|also|great|thanks|please|can you|could you|what if you|what if we|what if i|what happens if you|what happens if i|what do i get if i|what do you get if you)[\s,]+)+`)
	// anaphorRE are the words that name the previous result.
	anaphorRE = regexp.MustCompile(`\b(?:that result|that number|that answer|the result|the answer|the total|that|it|this)\b`)
	// implicitOps are operations whose left operand is left out: "times 3",
	// "subtract 10", "double".
	implicitOps = []struct {
		re *regexp.Regexp
		to string
	}{
		{regexp.MustCompile(`^(?:add|plus)\s+(\d+(?:\.\d+)?)`), "V + $1"},
		{regexp.MustCompile(`^(?:subtract|minus|take away|take off|less)\s+(\d+(?:\.\d+)?)`), "V - $1"},
		{regexp.MustCompile(`^(?:multiply\s+by|multiplied\s+by|times)\s+(\d+(?:\.\d+)?)`), "V * $1"},
		{regexp.MustCompile(`^(?:divide\s+by|divided\s+by|over|split\s+(?:by|between|among|into))\s+(\d+(?:\.\d+)?)`), "V / $1"},
		{regexp.MustCompile(`^(?:to the power of|raised to)\s+(\d+(?:\.\d+)?)`), "V ^ $1"},
		{regexp.MustCompile(`^(?:double|twice)\b`), "V * 2"},
		{regexp.MustCompile(`^(?:triple|thrice)\b`), "V * 3"},
		{regexp.MustCompile(`^(?:halve|half)\b`), "V / 2"},
		{regexp.MustCompile(`^squared?\b`), "V ^ 2"},
	}
)

// followUpArithmetic continues the conversation's last calculation when
// the message is an operation on its result ("and double that", "now
// subtract 10", "what's that times 3?", "10% of it"), or returns "". The
// assistant's last reply must be the calculator's, so a message that only
// shares a word with an operation is not taken for one.
func followUpArithmetic(q, conversation string) string {
	if len(tokens(q)) > 10 {
		return ""
	}
	v := lastCalculation(conversation)
	if v == "" {
		return ""
	}
	if strings.HasPrefix(v, "-") {
		v = "(0" + v + ")"
	}
	s := strings.TrimSpace(replaceAll(leadRE, strings.Trim(strings.ToLower(q), " ?.!"), ""))
	s = spellNumbers(s)
	s = replaceAll(anaphorRE, s, v)
	if !strings.Contains(s, v) {
		for _, op := range implicitOps {
			if op.re.MatchString(s) {
				s = replaceAll(op.re, s, strings.ReplaceAll(op.to, "V", v))
				break
			}
		}
	}
	expr := arithmetic(s)
	if !strings.Contains(expr, v) {
		return ""
	}
	return expr
}

// lastCalculation returns the value of the calculator's answer when it is
// the assistant's last reply in the transcript, or "".
func lastCalculation(conversation string) string {
	lines := strings.Split(conversation, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, "assistant:") {
			continue
		}
		if g := calculationRE.FindStringSubmatch(line); g != nil {
			return g[1]
		}
		return ""
	}
	return ""
}

// perYear is how many of each period make a year, for converting a rate
// from one period to another.
var perYear = map[string]int{"day": 365, "week": 52, "fortnight": 26, "month": 12, "quarter": 4, "year": 1}

// daysIn are the periods of a whole number of days, converted by days
// rather than by their share of a year.
var daysIn = map[string]int{"day": 1, "week": 7, "fortnight": 14}

const periodAlt = `day|week|fortnight|month|quarter|year`

var (
	// rateRE is an amount per period: "$29 per month", "15 dollars a
	// week", "$49 per seat per month".
	rateRE = regexp.MustCompile(`\$?(\d+(?:\.\d+)?)\s*(?:dollars?|usd|euros?|eur|pounds?|gbp)?\s*(?:(?:per|a|an|each)\s+[a-z]+\s+)??(?:per|a|an|each|every)\s+(` + periodAlt + `)s?\b`)
	// rateAdjRE is an amount with its period after it as an adjective:
	// "a $1,200 yearly licence", "$300 monthly".
	rateAdjRE = regexp.MustCompile(`\$?(\d+(?:\.\d+)?)\s*(?:dollars?|usd|euros?|eur|pounds?|gbp)?\s+(yearly|annual|monthly|weekly|daily|quarterly)\b`)
	// periodAskRE is the period an answer is asked for: "per year", "a
	// month", "for 2 years", "over a quarter".
	periodAskRE = regexp.MustCompile(`\b(?:(?:per|a|an|each|every)\s+(` + periodAlt + `)\b|(?:for|over|in|across)\s+(\d+(?:\.\d+)?|a|an|one|the)\s+(?:whole\s+|full\s+)?(` + periodAlt + `)s?\b)`)
	// periodAdverbRE is the period asked for as an adverb or adjective:
	// "annually", "monthly cost".
	periodAdverbRE = regexp.MustCompile(`\b(annually|annual|yearly|per annum|monthly|weekly|daily|quarterly)\b`)
	adverbPeriods  = map[string]string{"annually": "year", "annual": "year", "yearly": "year", "per annum": "year",
		"monthly": "month", "weekly": "week", "daily": "day", "quarterly": "quarter"}
)

// askedPeriod returns the period (and how many of it) that s asks an
// amount for, other than the period from, or "".
func askedPeriod(s, from string) (string, int) {
	for _, g := range periodAskRE.FindAllStringSubmatch(s, -1) {
		switch {
		case g[1] != "" && g[1] != from:
			return g[1], 1
		case g[3] != "":
			n := 1
			if v, err := strconv.Atoi(g[2]); err == nil && v > 0 {
				n = v
			}
			if g[3] != from || n > 1 {
				return g[3], n
			}
		}
	}
	for _, g := range periodAdverbRE.FindAllStringSubmatch(s, -1) {
		if p := adverbPeriods[g[1]]; p != from {
			return p, 1
		}
	}
	return "", 0
}

// overPeriod converts expr, an amount per period from, to the period
// asked for in s (n of them): "4 * 29" per month asked "per year" is
// "(4 * 29) * 12". It returns expr unchanged when s asks for no other
// period.
func overPeriod(expr, from, s string) string {
	to, n := askedPeriod(s, from)
	if to == "" {
		return expr
	}
	// The rate is per "from": there are perYear[from]/perYear[to] of
	// them in a "to", times n; between days and weeks, exactly 7.
	num, den := perYear[from]*n, perYear[to]
	if df, dt := daysIn[from], daysIn[to]; df > 0 && dt > 0 {
		num, den = dt*n, df
	}
	for g := gcd(num, den); g > 1; g = gcd(num, den) {
		num, den = num/g, den/g
	}
	out := "(" + expr + ")"
	if exprNumberRE.FindString(expr) == expr {
		out = expr
	}
	if num != 1 {
		out += " * " + strconv.Itoa(num)
	}
	if den != 1 {
		out += " / " + strconv.Itoa(den)
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// periodArithmetic applies a rate's period conversion to best, the
// expression found in q (lower case): a rate ("$15 a week") and another
// period asked for ("how much is that per year?") multiply the rate, or
// the expression that holds it, by the number of periods. It returns
// best unchanged when q has no rate or asks for no other period.
func periodArithmetic(best, q string) string {
	m := rateRE.FindStringSubmatchIndex(q)
	if m == nil {
		m = rateAdjRE.FindStringSubmatchIndex(q)
	}
	if m == nil {
		return best
	}
	amount, from := q[m[2]:m[3]], q[m[4]:m[5]]
	if p, ok := adverbPeriods[from]; ok {
		from = p
	}
	rest := q[:m[0]] + " " + q[m[1]:]
	switch {
	case best == "":
		best = amount
	case !slices.Contains(exprNumberRE.FindAllString(best, -1), amount):
		return best // the expression is about other numbers
	}
	if out := overPeriod(best, from, rest); out != best {
		return out
	}
	if best == amount {
		return ""
	}
	return best
}

// exprNumberRE is a number in an expression.
var exprNumberRE = regexp.MustCompile(`\d+(?:\.\d+)?`)

// quantityRE is a number and the word it counts, written apart or with a
// hyphen, and the word after that: "4 hours", "4-hour", "14-day", "2
// business days".
var quantityRE = regexp.MustCompile(`(\d+(?:\.\d+)?)(?:\s+|-)([a-z]+)(?:[\s-]+([a-z]+))?`)

// namedNumberRE is a word in capitals and the number after it, as in "SOC
// 2", "ISO 27001", "TLS 1.2": an initialism's number names it (see
// quantities).
var namedNumberRE = regexp.MustCompile(`\b([A-Z]{2,})\s+(\d+(?:\.\d+)?)\b`)

// quantity is a number and what it counts, the count's word singular:
// "4 hours" and "a four-hour target" are both {4, hour}; "2 business
// days" is {2, day}, not "2 business hours" {2, hour}.
type quantity struct{ n, unit string }

// quantities returns the quantities s names, its spelled-out numbers read
// as digits. A word between the number and a unit of measure qualifies
// the unit ("business" in "2 business days"): the unit is what is counted.
// A number after an initialism is part of a name, not a count: "SOC 2
// report" counts no reports, so a sentence that says "SOC 2 Type II
// report" shares what "SOC 2 report" asks.
func quantities(s string) []quantity {
	l := strings.ToLower(s)
	if !strings.ContainsAny(l, "0123456789") && !numberRunRE.MatchString(l) {
		return nil
	}
	var named []string
	for _, m := range namedNumberRE.FindAllStringSubmatch(s, -1) {
		if lexicon.Initialism(m[1]) {
			named = append(named, m[2])
		}
	}
	var out []quantity
	for _, m := range quantityRE.FindAllStringSubmatch(spellNumbers(l), -1) {
		if stopwords[m[2]] || slices.Contains(named, m[1]) {
			continue // "4 of", "2 and": no unit; "SOC 2 report": a name
		}
		u := unitOf(m[2])
		if next := unitOf(m[3]); m[3] != "" && measureUnits[next] && !measureUnits[u] {
			u = next // "2 business days": days
		}
		out = append(out, quantity{m[1], u})
	}
	return out
}

// unitOf is a counted word singular and unabbreviated: "hrs" is "hour".
func unitOf(w string) string {
	u := singular(w)
	if full, ok := unitAbbreviations[u]; ok {
		u = full
	}
	return u
}

// measureUnits are units of time and size a qualifier may stand before.
var measureUnits = map[string]bool{"second": true, "minute": true, "hour": true, "day": true, "week": true, "month": true,
	"year": true, "quarter": true, "gb": true, "mb": true, "tb": true, "kb": true, "seat": true, "editor": true, "user": true}

// unitAbbreviations are units as they are shortened: "5 mins".
var unitAbbreviations = map[string]string{"min": "minute", "mins": "minute", "hr": "hour", "hrs": "hour", "sec": "second",
	"secs": "second", "yr": "year", "yrs": "year", "wk": "week", "wks": "week", "mo": "month", "mos": "month"}

// singular drops a plural's s: "hours" is "hour", "days" is "day".
func singular(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		return w[:len(w)-1]
	}
	return w
}

// sharesQuantity reports whether s names one of the quantities qs.
func sharesQuantity(s string, qs []quantity) bool {
	if len(qs) == 0 {
		return false
	}
	for _, x := range quantities(s) {
		if slices.Contains(qs, x) {
			return true
		}
	}
	return false
}

// numberValue returns the digits of a number however it is written, a
// token of digits ("12", "1,000") or a spelled-out number ("twelve"),
// and false for any other word. "Twelve editors" and "12 editors" ask the
// same.
func numberValue(w string) (string, bool) {
	w = strings.Trim(w, "$%")
	if v, ok := numberWords[w]; ok && v < 100 {
		return strconv.Itoa(v), true
	}
	d := strings.ReplaceAll(w, ",", "")
	if d == "" || strings.Trim(d, "0123456789") != "" {
		return "", false
	}
	return d, true
}

// spelledNumber returns the number word for the digits of a whole number
// up to twenty ("4" is "four"), the way passages write small numbers, or "".
func spelledNumber(d string) string {
	for w, v := range numberWords {
		if v <= 20 && strconv.Itoa(v) == d {
			return w
		}
	}
	return ""
}
