package calculator

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// ExprError reports an expression that cannot be evaluated, with the
// 1-based column where the problem is.
type ExprError struct {
	// Column is the 1-based position, in characters, of the problem.
	Column int
	// Msg says what is wrong and, where it helps, what to write instead.
	Msg string
}

// Error says what is wrong with the expression and at which column.
func (e *ExprError) Error() string {
	return fmt.Sprintf("calculator: column %d: %s", e.Column, e.Msg)
}

// Eval evaluates an arithmetic expression: numbers (1, 2.5, 1e3, 1_000),
// + - * / % (remainder), ^ or ** (power, right-associative), parentheses,
// unary minus, the constants pi, e and tau, and the functions abs, sqrt,
// cbrt, exp, ln, log (base 10), log2, sin, cos, tan, asin, acos, atan,
// floor, ceil, round(x) or round(x, digits), min(...), max(...), hypot(x, y)
// and pow(x, y). Angles are in radians. The result must be a finite number.
func Eval(expr string) (float64, error) {
	p := &parser{src: expr}
	p.next()
	if p.tok.kind == tokEOF {
		return 0, &ExprError{1, "empty expression; write something like 2 * (3 + 4)"}
	}
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	if p.err != nil {
		return 0, p.err
	}
	if p.tok.kind != tokEOF {
		return 0, p.errorf("unexpected %s after a complete expression", p.tok)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, &ExprError{1, fmt.Sprintf("the result is not a finite number (%v)", v)}
	}
	return v, nil
}

// FormatNumber prints v with up to 15 significant digits, which hides
// binary rounding noise such as 0.1 + 0.2 = 0.30000000000000004.
func FormatNumber(v float64) string {
	if v == 0 {
		return "0" // not "-0"
	}
	return strconv.FormatFloat(v, 'g', 15, 64)
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokIdent
	tokOp
)

type token struct {
	kind tokKind
	text string
	num  float64
	col  int
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of expression"
	case tokNum:
		return "number " + t.text
	}
	return strconv.Quote(t.text)
}

type parser struct {
	src string
	pos int // byte offset of the next unread character
	tok token
	err error
}

func (p *parser) errorf(format string, args ...any) error {
	return &ExprError{p.tok.col, fmt.Sprintf(format, args...)}
}

func (p *parser) next() {
	for p.pos < len(p.src) && unicode.IsSpace(rune(p.src[p.pos])) {
		p.pos++
	}
	start := p.pos
	col := len([]rune(p.src[:start])) + 1
	if p.pos >= len(p.src) {
		p.tok = token{kind: tokEOF, col: col}
		return
	}
	c := p.src[p.pos]
	switch {
	case c >= '0' && c <= '9' || c == '.':
		for p.pos < len(p.src) && (isDigitOrDot(p.src[p.pos]) || p.src[p.pos] == '_') {
			p.pos++
		}
		if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
			q := p.pos + 1
			if q < len(p.src) && (p.src[q] == '+' || p.src[q] == '-') {
				q++
			}
			if q < len(p.src) && p.src[q] >= '0' && p.src[q] <= '9' {
				for q < len(p.src) && p.src[q] >= '0' && p.src[q] <= '9' {
					q++
				}
				p.pos = q
			}
		}
		text := p.src[start:p.pos]
		v, err := strconv.ParseFloat(strings.ReplaceAll(text, "_", ""), 64)
		if err != nil {
			p.tok = token{kind: tokNum, text: text, col: col}
			p.err = &ExprError{col, fmt.Sprintf("%q is not a number", text)}
			return
		}
		p.tok = token{kind: tokNum, text: text, num: v, col: col}
	case isIdentByte(c):
		for p.pos < len(p.src) && (isIdentByte(p.src[p.pos]) || p.src[p.pos] >= '0' && p.src[p.pos] <= '9') {
			p.pos++
		}
		p.tok = token{kind: tokIdent, text: p.src[start:p.pos], col: col}
	case c == '*' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
		p.pos += 2
		p.tok = token{kind: tokOp, text: "**", col: col}
	default:
		p.pos++
		p.tok = token{kind: tokOp, text: string(rune(c)), col: col}
		if !strings.ContainsRune("+-*/%^(),", rune(c)) {
			r := []rune(p.src[start:])[0]
			p.pos = start + len(string(r))
			p.tok.text = string(r)
			p.err = &ExprError{col, fmt.Sprintf("unexpected character %q; use numbers, + - * / %% ^, parentheses and functions", r)}
		}
	}
}

func isIdentByte(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigitOrDot(c byte) bool { return c >= '0' && c <= '9' || c == '.' }

func (p *parser) is(op string) bool { return p.err == nil && p.tok.kind == tokOp && p.tok.text == op }

// expr = term { ("+" | "-") term }
func (p *parser) expr() (float64, error) {
	v, err := p.term()
	for err == nil && (p.is("+") || p.is("-")) {
		op := p.tok.text
		p.next()
		var r float64
		if r, err = p.term(); err == nil {
			if op == "+" {
				v += r
			} else {
				v -= r
			}
		}
	}
	return v, err
}

// term = unary { ("*" | "/" | "%") unary }
func (p *parser) term() (float64, error) {
	v, err := p.unary()
	for err == nil && (p.is("*") || p.is("/") || p.is("%")) {
		op := p.tok
		p.next()
		var r float64
		if r, err = p.unary(); err != nil {
			break
		}
		switch op.text {
		case "*":
			v *= r
		case "/":
			if r == 0 {
				return 0, &ExprError{op.col, "division by zero"}
			}
			v /= r
		case "%":
			if r == 0 {
				return 0, &ExprError{op.col, "remainder by zero"}
			}
			v = math.Mod(v, r)
		}
	}
	return v, err
}

// unary = ("-" | "+") unary | power
func (p *parser) unary() (float64, error) {
	if p.is("-") || p.is("+") {
		neg := p.tok.text == "-"
		p.next()
		v, err := p.unary()
		if neg {
			v = -v
		}
		return v, err
	}
	return p.power()
}

// power = primary [ ("^" | "**") unary ]
func (p *parser) power() (float64, error) {
	v, err := p.primary()
	if err != nil {
		return 0, err
	}
	if p.is("^") || p.is("**") {
		p.next()
		e, err := p.unary()
		if err != nil {
			return 0, err
		}
		return math.Pow(v, e), nil
	}
	return v, nil
}

// primary = number | constant | function "(" args ")" | "(" expr ")"
func (p *parser) primary() (float64, error) {
	if p.err != nil {
		return 0, p.err
	}
	tok := p.tok
	switch {
	case tok.kind == tokNum:
		p.next()
		return tok.num, nil
	case tok.kind == tokIdent:
		p.next()
		name := strings.ToLower(tok.text)
		if p.is("(") {
			return p.call(tok, name)
		}
		if c, ok := constants[name]; ok {
			return c, nil
		}
		if _, ok := functions[name]; ok {
			return 0, &ExprError{tok.col, fmt.Sprintf("function %s needs arguments in parentheses, e.g. %s(2)", name, name)}
		}
		return 0, &ExprError{tok.col, fmt.Sprintf("unknown name %q; constants are pi, e and tau", tok.text)}
	case p.is("("):
		p.next()
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		if !p.is(")") {
			if p.err != nil {
				return 0, p.err
			}
			return 0, p.errorf("expected \")\" to close the parenthesis at column %d, found %s", tok.col, p.tok)
		}
		p.next()
		return v, nil
	}
	return 0, p.errorf("expected a number, a name or \"(\", found %s", tok)
}

func (p *parser) call(name token, fn string) (float64, error) {
	f, ok := functions[fn]
	if !ok {
		return 0, &ExprError{name.col, fmt.Sprintf("unknown function %q", name.text)}
	}
	p.next() // "("
	var args []float64
	if !p.is(")") {
		for {
			v, err := p.expr()
			if err != nil {
				return 0, err
			}
			args = append(args, v)
			if !p.is(",") {
				break
			}
			p.next()
		}
	}
	if !p.is(")") {
		if p.err != nil {
			return 0, p.err
		}
		return 0, p.errorf("expected \",\" or \")\" in the arguments of %s, found %s", fn, p.tok)
	}
	p.next()
	if len(args) < f.min || (f.max >= 0 && len(args) > f.max) {
		return 0, &ExprError{name.col, fmt.Sprintf("%s takes %s, got %d", fn, f.arity(), len(args))}
	}
	v, err := f.fn(args)
	if err != nil {
		return 0, &ExprError{name.col, fmt.Sprintf("%s: %v", fn, err)}
	}
	return v, nil
}

var constants = map[string]float64{"pi": math.Pi, "e": math.E, "tau": 2 * math.Pi}

type function struct {
	min, max int // max < 0: variadic
	fn       func([]float64) (float64, error)
}

func (f function) arity() string {
	switch {
	case f.max < 0:
		return fmt.Sprintf("at least %d arguments", f.min)
	case f.min == f.max && f.min == 1:
		return "1 argument"
	case f.min == f.max:
		return fmt.Sprintf("%d arguments", f.min)
	}
	return fmt.Sprintf("%d to %d arguments", f.min, f.max)
}

func unary(f func(float64) float64) function {
	return function{1, 1, func(a []float64) (float64, error) { return f(a[0]), nil }}
}

func domain(f func(float64) float64, ok func(float64) bool, want string) function {
	return function{1, 1, func(a []float64) (float64, error) {
		if !ok(a[0]) {
			return 0, fmt.Errorf("argument %v is out of range; it must be %s", FormatNumber(a[0]), want)
		}
		return f(a[0]), nil
	}}
}

func positive(x float64) bool  { return x > 0 }
func unitRange(x float64) bool { return x >= -1 && x <= 1 }

var functions = map[string]function{
	"abs":   unary(math.Abs),
	"sqrt":  domain(math.Sqrt, func(x float64) bool { return x >= 0 }, ">= 0"),
	"cbrt":  unary(math.Cbrt),
	"exp":   unary(math.Exp),
	"ln":    domain(math.Log, positive, "> 0"),
	"log":   domain(math.Log10, positive, "> 0"),
	"log2":  domain(math.Log2, positive, "> 0"),
	"sin":   unary(math.Sin),
	"cos":   unary(math.Cos),
	"tan":   unary(math.Tan),
	"asin":  domain(math.Asin, unitRange, "between -1 and 1"),
	"acos":  domain(math.Acos, unitRange, "between -1 and 1"),
	"atan":  unary(math.Atan),
	"floor": unary(math.Floor),
	"ceil":  unary(math.Ceil),
	"round": {1, 2, func(a []float64) (float64, error) {
		if len(a) == 1 {
			return math.Round(a[0]), nil
		}
		if a[1] != math.Trunc(a[1]) || a[1] < 0 || a[1] > 15 {
			return 0, fmt.Errorf("digits must be a whole number from 0 to 15")
		}
		s := math.Pow(10, a[1])
		return math.Round(a[0]*s) / s, nil
	}},
	"min": {1, -1, func(a []float64) (float64, error) {
		m := a[0]
		for _, v := range a[1:] {
			m = math.Min(m, v)
		}
		return m, nil
	}},
	"max": {1, -1, func(a []float64) (float64, error) {
		m := a[0]
		for _, v := range a[1:] {
			m = math.Max(m, v)
		}
		return m, nil
	}},
	"hypot": {2, 2, func(a []float64) (float64, error) { return math.Hypot(a[0], a[1]), nil }},
	"pow":   {2, 2, func(a []float64) (float64, error) { return math.Pow(a[0], a[1]), nil }},
}
