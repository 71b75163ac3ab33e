package agent

import (
	"encoding/json"
	"unicode/utf8"
)

// parseTree parses the JSON value in s into the tree the schema validator
// reads: map[string]any, []any, string, json.Number, bool and nil, with null
// object members dropped (see dropNulls). It is the fast path of check: it
// gives the tree encoding/json (with UseNumber) followed by dropNulls would
// give, in one pass and with fewer allocations, for every input it accepts.
//
// ok is false when the fast path declines: malformed JSON, text after the
// value, nesting deeper than encoding/json allows. The caller then parses with
// encoding/json, which words the error. plain is true when the text had no
// null and no repeated object key, so that the tree holds everything the
// text says (see treeDecoder).
func parseTree(s string) (doc any, plain, ok bool) {
	p := treeParser{s: s, plain: true}
	p.skipSpace()
	v, ok := p.value(0)
	if !ok {
		return nil, false, false
	}
	p.skipSpace()
	if p.i != len(s) {
		return nil, false, false
	}
	return v, p.plain, true
}

// maxTreeDepth is encoding/json's nesting limit.
const maxTreeDepth = 10000

type treeParser struct {
	s     string
	i     int
	plain bool
}

func (p *treeParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *treeParser) value(depth int) (any, bool) {
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, ok := p.str()
		if !ok {
			return nil, false
		}
		return s, true
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		p.plain = false
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		n, ok := p.number()
		if !ok {
			return nil, false
		}
		return n, true
	}
	return nil, false
}

func (p *treeParser) literal(lit string) bool {
	if len(p.s)-p.i < len(lit) || p.s[p.i:p.i+len(lit)] != lit {
		return false
	}
	p.i += len(lit)
	return true
}

func (p *treeParser) object(depth int) (any, bool) {
	if depth > maxTreeDepth {
		return nil, false
	}
	p.i++ // {
	m := make(map[string]any)
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.skipSpace()
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		if _, dup := m[k]; dup {
			p.plain = false
		}
		if v == nil {
			// The last of repeated keys wins, and a null member is absent.
			delete(m, k)
		} else {
			m[k] = v
		}
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case '}':
			p.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (p *treeParser) array(depth int) (any, bool) {
	if depth > maxTreeDepth {
		return nil, false
	}
	p.i++ // [
	a := make([]any, 0)
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case ']':
			p.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// str reads a string. One without escapes and with valid UTF-8 is a slice of
// the input; any other is unquoted by encoding/json, whose rules for escapes,
// surrogates and invalid UTF-8 it then follows exactly.
func (p *treeParser) str() (string, bool) {
	start := p.i
	p.i++ // "
	simple := true
	ascii := true
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			body := p.s[start+1 : p.i-1]
			if simple && (ascii || utf8.ValidString(body)) {
				return body, true
			}
			var out string
			if json.Unmarshal([]byte(p.s[start:p.i]), &out) != nil {
				return "", false
			}
			return out, true
		case c == '\\':
			simple = false
			p.i += 2
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
			p.i++
		default:
			p.i++
		}
	}
	return "", false
}

// number reads a number in JSON's grammar and returns its text.
func (p *treeParser) number() (json.Number, bool) {
	s, i := p.s, p.i
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return "", false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return "", false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return "", false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	n := json.Number(s[p.i:i])
	p.i = i
	return n, true
}
