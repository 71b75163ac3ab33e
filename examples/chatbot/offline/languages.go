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
// each a whole word: a word boundary of any script, as \b is of ASCII. A
// digit operand is a whole number, a decimal with a point or a comma
// ("2,5"), or a whole number with dots between thousands ("1.000"); a
// number does not begin after a point or a comma.
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
	operand := `(\d{1,3}(?:\.\d{3})+|\d+(?:[.,]\d+)?|` + alt(nums) + `)`
	return regexp.MustCompile(`(^|[^\p{L}\d.,])` + operand + `\s+(` + alt(ops) + `)\s+` + operand + `([^\p{L}\d]|$)`)
}()

// dotThousandsRE is a whole number written with dots between thousands,
// as German, French and Spanish write it: "1.000", "2.500.000".
var dotThousandsRE = regexp.MustCompile(`^\d{1,3}(?:\.\d{3})+$`)

// foreignFrameRE is the opening of an arithmetic question in German,
// French or Spanish: "was ist", "combien font", "cuánto es".
var foreignFrameRE = regexp.MustCompile(`(?:^|[^\p{L}])(?:was\s+(?:ist|sind|macht|ergibt|ergeben)|wie\s*viel\s+(?:ist|sind|macht|ergibt)|combien\s+(?:font|fait|ça\s+fait|ca\s+fait)|cu[aá]nto\s+(?:es|son|da|dan))(?:[^\p{L}]|$)`)

// frameOperators are the foreign operators that are also common words
// between two numbers ("uno por uno", "2 por 1", "entre 3 y 4"): they are
// read as operators only in an arithmetic question (foreignFrameRE).
var frameOperators = map[string]bool{"por": true, "entre": true}

// englishLookalikes are the foreign number words that are English words
// or units too ("cent", "mil", "once", "elf"): they are not the operands
// of "plus" and "minus", which English shares.
var englishLookalikes = map[string]bool{
	"null": true, "elf": true, "un": true, "une": true, "six": true, "sept": true, "cent": true,
	"mil": true, "once": true, "dos": true, "mille": true,
}

// foreignArithmetic writes the arithmetic of German, French and Spanish
// (lower case) with the calculator's symbols, and the number words that
// are its operands as digits: "was ist zwölf mal drei?" is "was ist 12 *
// 3?"; decimal commas are written with a point and dots between
// thousands are dropped ("2,5" is 2.5, "1.000" is 1000). An operator word
// is read as one only between two numbers, so "por" of "por favor" and
// "entre" of "entre nous" stay words; "por" and "entre" only in an
// arithmetic question (foreignFrameRE); a number word right after a
// number is no operand ("3 mil", "cien por cien" after "al"), nor an
// English-looking one of "plus" or "minus" ("3 mil plus 2 mil"). The
// rest of the text is left as it is.
func foreignArithmetic(s string) string {
	operand := func(w string) string {
		if v, ok := foreignNumbers[w]; ok {
			return strconv.Itoa(v)
		}
		if dotThousandsRE.MatchString(w) {
			return strings.ReplaceAll(w, ".", "")
		}
		return strings.ReplaceAll(w, ",", ".")
	}
	framed := foreignFrameRE.MatchString(s)
	// afterNumber reports whether the text before i ends in a number.
	afterNumber := func(i int) bool {
		f := strings.Fields(s[:i])
		if len(f) == 0 {
			return false
		}
		last := strings.TrimRight(f[len(f)-1], ",;:")
		if _, ok := foreignNumbers[last]; ok {
			return true
		}
		_, err := strconv.ParseFloat(strings.ReplaceAll(last, ",", "."), 64)
		return err == nil
	}
	ok := func(s string, g []int) bool {
		a, op, b := s[g[4]:g[5]], s[g[6]:g[7]], s[g[8]:g[9]]
		if frameOperators[op] && !framed {
			return false
		}
		_, aWord := foreignNumbers[a]
		_, bWord := foreignNumbers[b]
		if aWord && afterNumber(g[4]) {
			return false
		}
		if (op == "plus" || op == "minus") && (aWord && englishLookalikes[a] || bWord && englishLookalikes[b]) {
			return false
		}
		return true
	}
	// Each pass rewrites every other operator of a chain ("2 mal 3 mal 4"
	// shares the 3); a chain of n operators takes at most n passes.
	for range len(s) {
		var b strings.Builder
		last := 0
		for _, g := range foreignArithmeticRE.FindAllStringSubmatchIndex(s, -1) {
			if !ok(s, g) {
				continue
			}
			b.WriteString(s[last:g[0]])
			b.WriteString(s[g[2]:g[3]] + operand(s[g[4]:g[5]]) + " " + foreignOperators[s[g[6]:g[7]]] + " " + operand(s[g[8]:g[9]]) + s[g[10]:g[11]])
			last = g[1]
		}
		b.WriteString(s[last:])
		next := b.String()
		if next == s {
			break
		}
		s = next
	}
	return s
}

// foreignCalculation reports whether a message in German, French or
// Spanish asks arithmetic: a foreign operator between two numbers
// ("12 mal 7"), or an arithmetic question ("¿cuánto es 5 + 3?") with an
// expression. A digit, a sign and a digit elsewhere ("soporte 24/7",
// "10-15 usuarios") is no calculation.
func foreignCalculation(q string) bool {
	s := strings.ToLower(q)
	if foreignArithmetic(s) != s {
		return true
	}
	return foreignFrameRE.MatchString(s) && arithmetic(q) != ""
}
