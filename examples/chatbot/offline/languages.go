package offline

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// foreignOperators are the arithmetic operators of German, French and
// Spanish, with the calculator's symbol: "12 mal 7", "15 fois 3", "100
// entre 4", "100 geteilt durch 8". English's "plus" and "minus", which
// German and French share, are here for their foreign operands ("vierzig
// minus acht").
var foreignOperators = map[string]string{
	"mal": "*", "multipliziert mit": "*", "fois": "*", "multiplié par": "*", "multiplie par": "*",
	"por": "*", "multiplicado por": "*",
	"geteilt durch": "/", "dividiert durch": "/", "durch": "/", "divisé par": "/", "divise par": "/",
	"dividido por": "/", "dividido entre": "/", "entre": "/",
	"plus": "+", "más": "+", "mas": "+",
	"minus": "-", "moins": "-", "menos": "-", "weniger": "-",
}

// foreignNumbers are the values of German, French and Spanish number
// words, read only as the operands of a foreign operator: "elf" or "once"
// elsewhere is no number.
var foreignNumbers = map[string]int{
	"null": 0, "eins": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "fuenf": 5, "sechs": 6, "sieben": 7, "acht": 8,
	"neun": 9, "zehn": 10, "elf": 11, "zwölf": 12, "zwoelf": 12, "zwanzig": 20, "dreißig": 30, "dreissig": 30,
	"vierzig": 40, "fünfzig": 50, "fuenfzig": 50, "sechzig": 60, "siebzig": 70, "achtzig": 80, "neunzig": 90,
	"hundert": 100, "tausend": 1000,
	"zéro": 0, "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8,
	"neuf": 9, "dix": 10, "onze": 11, "douze": 12, "treize": 13, "quatorze": 14, "quinze": 15, "seize": 16,
	"vingt": 20, "trente": 30, "quarante": 40, "cinquante": 50, "soixante": 60, "cent": 100, "mille": 1000,
	"cero": 0, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8,
	"nueve": 9, "diez": 10, "once": 11, "doce": 12, "trece": 13, "catorce": 14, "quince": 15, "veinte": 20,
	"treinta": 30, "cuarenta": 40, "cincuenta": 50, "sesenta": 60, "setenta": 70, "ochenta": 80, "noventa": 90,
	"cien": 100, "mil": 1000,
}

// foreignArithmeticRE is an operand, a foreign operator and an operand,
// each a whole word: a word boundary of any script, as \b is of ASCII.
var foreignArithmeticRE = func() *regexp.Regexp {
	alt := func(words []string) string {
		// The longest first: "dividido por" before "por".
		slices.SortFunc(words, func(a, b string) int { return len(b) - len(a) })
		for i, w := range words {
			words[i] = regexp.QuoteMeta(w)
		}
		return strings.Join(words, "|")
	}
	var ops, nums []string
	for w := range foreignOperators {
		ops = append(ops, w)
	}
	for w := range foreignNumbers {
		nums = append(nums, w)
	}
	operand := `(\d+(?:\.\d+)?|` + alt(nums) + `)`
	return regexp.MustCompile(`(^|[^\p{L}\d.])` + operand + `\s+(` + alt(ops) + `)\s+` + operand + `([^\p{L}\d]|$)`)
}()

// foreignArithmetic writes the arithmetic of German, French and Spanish
// (lower case) with the calculator's symbols, and the number words that
// are its operands as digits: "was ist zwölf mal drei?" is "was ist 12 *
// 3?". An operator word is read as one only between two numbers, so "por"
// of "por favor" and "entre" of "entre nous" stay words. The rest of the
// text is left as it is.
func foreignArithmetic(s string) string {
	operand := func(w string) string {
		if v, ok := foreignNumbers[w]; ok {
			return strconv.Itoa(v)
		}
		return w
	}
	// Each pass rewrites every other operator of a chain ("2 mal 3 mal 4"
	// shares the 3); a chain of n operators takes at most n passes.
	for range len(s) {
		next := foreignArithmeticRE.ReplaceAllStringFunc(s, func(m string) string {
			g := foreignArithmeticRE.FindStringSubmatch(m)
			return g[1] + operand(g[2]) + " " + foreignOperators[g[3]] + " " + operand(g[4]) + g[5]
		})
		if next == s {
			break
		}
		s = next
	}
	return s
}
