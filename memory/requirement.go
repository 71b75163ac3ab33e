package memory

import "strings"

// Requirement is one parsed entry of the requirements DSL: source,
// source.method or source.method(argument). See the package documentation
// for the grammar.
type Requirement struct {
	// Source names the registered source: "conversation", "tools", "query".
	Source string
	// Method is what the requirement asks of the source: "recent",
	// "summary"; empty for a bare source such as "query".
	Method string
	// Arg is the argument between the parentheses, without surrounding
	// spaces: "5" in conversation.recent(5). Empty when HasArg is false.
	Arg string
	// HasArg reports whether the requirement had parentheses.
	HasArg bool
}

// String returns the canonical form: "query", "conversation.summary",
// "conversation.recent(5)". Parsing it yields the same Requirement.
func (r Requirement) String() string {
	n := len(r.Source)
	if r.Method != "" {
		n += 1 + len(r.Method)
	}
	if r.HasArg {
		n += 2 + len(r.Arg)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(r.Source)
	if r.Method != "" {
		b.WriteByte('.')
		b.WriteString(r.Method)
	}
	if r.HasArg {
		b.WriteByte('(')
		b.WriteString(r.Arg)
		b.WriteByte(')')
	}
	return b.String()
}

// ParseRequirement parses one requirement string. Spaces and tabs are
// allowed around the whole requirement and inside the parentheses, nowhere
// else. A string that does not follow the grammar yields a [*SyntaxError]
// naming the byte offset where parsing failed and what was expected there.
func ParseRequirement(s string) (Requirement, error) {
	p := parser{s: s}
	p.space()
	var r Requirement
	var ok bool
	if r.Source, ok = p.ident(); !ok {
		return Requirement{}, p.fail("a source name (a letter or '_', then letters, digits or '_')")
	}
	p.space()
	if p.eof() {
		return r, nil
	}
	if p.peek() != '.' {
		return Requirement{}, p.fail(`"." before a method name, or the end of the requirement`)
	}
	p.i++
	if r.Method, ok = p.ident(); !ok {
		return Requirement{}, p.fail("a method name after \".\" (a letter or '_', then letters, digits or '_')")
	}
	p.space()
	if p.eof() {
		return r, nil
	}
	if p.peek() != '(' {
		return Requirement{}, p.fail(`"(" before an argument, or the end of the requirement`)
	}
	p.i++
	r.HasArg = true
	p.space()
	start := p.i
	for !p.eof() && isArgByte(p.peek()) {
		p.i++
	}
	if p.i == start {
		return Requirement{}, p.fail("an argument (letters, digits and _ . - : / @), e.g. recent(5) or schema(web_search)")
	}
	r.Arg = s[start:p.i]
	p.space()
	if p.eof() || p.peek() != ')' {
		return Requirement{}, p.fail(`")" to close the argument`)
	}
	p.i++
	p.space()
	if !p.eof() {
		return Requirement{}, p.fail("the end of the requirement after \")\"")
	}
	return r, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) eof() bool  { return p.i >= len(p.s) }
func (p *parser) peek() byte { return p.s[p.i] }

func (p *parser) space() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
}

func (p *parser) ident() (string, bool) {
	start := p.i
	if p.eof() || !isIdentStart(p.peek()) {
		return "", false
	}
	p.i++
	for !p.eof() && (isIdentStart(p.peek()) || isDigit(p.peek())) {
		p.i++
	}
	return p.s[start:p.i], true
}

func (p *parser) fail(expected string) error {
	return &SyntaxError{Requirement: p.s, Offset: p.i, Expected: expected}
}

func isIdentStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool      { return '0' <= c && c <= '9' }

func isArgByte(c byte) bool {
	return isIdentStart(c) || isDigit(c) || c == '.' || c == '-' || c == ':' || c == '/' || c == '@'
}

// validName reports whether name is a valid source name.
func validName(name string) bool {
	if name == "" || !isIdentStart(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isIdentStart(name[i]) && !isDigit(name[i]) {
			return false
		}
	}
	return true
}
