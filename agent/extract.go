package agent

import (
	"encoding/json"
	"strings"
)

// ExtractJSON finds the JSON value in a model's reply. It handles a bare
// value, a value with prose before and after it, and a value in a fenced
// code block (```json or plain ```). Objects and arrays are found by a
// balanced-bracket scan that skips brackets inside JSON strings, so
// `{"a": "}"}` is one value. When several candidates appear, the longest
// valid one wins.
//
// It returns the value's text and true, or, when the reply holds no valid
// JSON, the most likely broken candidate (from the first bracket on) and
// false, so that a decoder can report where it breaks.
func ExtractJSON(text string) (string, bool) {
	start, end, ok := extractJSON(text, 0, true)
	return text[start:end], ok
}

// extractJSON returns the byte range of the JSON value in text. want is '{'
// or '[' to look only for objects or arrays, or 0 for either. Without verify,
// a balanced candidate that is the only one in its text is returned without
// checking that it is valid JSON, for a caller that parses it next anyway.
func extractJSON(text string, want byte, verify bool) (start, end int, ok bool) {
	// Fenced blocks first: their content is what the model meant as output.
	for rest, base := text, 0; ; {
		i := strings.Index(rest, "```")
		if i < 0 {
			break
		}
		body, info := i+3, ""
		if nl := strings.IndexByte(rest[body:], '\n'); nl >= 0 && isFenceInfo(rest[body:body+nl]) {
			info = strings.ToLower(strings.TrimSpace(rest[body : body+nl]))
			body += nl + 1
		}
		j := strings.Index(rest[body:], "```")
		if j < 0 {
			break
		}
		// Blocks marked as another language (```go) are not the answer.
		if info != "" && info != "json" {
			base += body + j + 3
			rest = rest[body+j+3:]
			continue
		}
		if s, e, ok := scanCandidates(rest[body:body+j], want, verify); ok {
			return base + body + s, base + body + e, true
		}
		base += body + j + 3
		rest = rest[body+j+3:]
	}
	if s, e, ok := scanCandidates(text, want, verify); ok {
		return s, e, true
	}
	// Nothing valid: report the first candidate, so its syntax error can be
	// shown, or the whole text when there is no bracket at all.
	first := firstOpen(text, 0, want)
	if first < 0 {
		t := strings.TrimSpace(text)
		s := strings.Index(text, t)
		return s, s + len(t), false
	}
	if e := balancedEnd(text, first); e > 0 {
		return first, e, false
	}
	return first, len(text), false
}

// isFenceInfo reports whether the rest of a fence line is an info string
// such as "json" (and not JSON itself, as in ```{"a":1}```).
func isFenceInfo(s string) bool {
	s = strings.TrimSpace(s)
	return !strings.ContainsAny(s, "{[\"")
}

// scanCandidates tries every opening bracket in order and returns the
// longest balanced value that is valid JSON, so that a stray "[1]" in prose
// does not hide the answer. Values nested in a valid one are not tried. A
// bare scalar reply ("42", "\"x\"") is accepted only when nothing else is in
// the text and want is 0.
func scanCandidates(text string, want byte, verify bool) (start, end int, ok bool) {
	if first := firstOpen(text, 0, want); !verify && first >= 0 {
		if e := balancedEnd(text, first); e > 0 && firstOpen(text, e, want) < 0 {
			return first, e, true
		}
	}
	for i := firstOpen(text, 0, want); i >= 0; {
		e := balancedEnd(text, i)
		if e > 0 && json.Valid([]byte(text[i:e])) {
			if !ok || e-i > end-start {
				start, end, ok = i, e, true
			}
			i = firstOpen(text, e, want)
			continue
		}
		i = firstOpen(text, i+1, want)
	}
	if ok {
		return start, end, true
	}
	if want == 0 {
		t := strings.TrimSpace(text)
		if t != "" && json.Valid([]byte(t)) {
			s := strings.Index(text, t)
			return s, s + len(t), true
		}
	}
	return 0, 0, false
}

func firstOpen(text string, from int, want byte) int {
	for i := from; i < len(text); i++ {
		c := text[i]
		if (c == '{' || c == '[') && (want == 0 || c == want) {
			return i
		}
	}
	return -1
}

// balancedEnd returns the index just past the bracket that closes the one at
// text[start], or -1 when it is never closed or closed by the wrong kind.
// Brackets inside strings (with their escapes) do not count.
func balancedEnd(text string, start int) int {
	var stack [64]byte
	closers := stack[:0]
	inString, escaped := false, false
	for i := start; i < len(text); i++ {
		c := text[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{':
			closers = append(closers, '}')
		case '[':
			closers = append(closers, ']')
		case '}', ']':
			if len(closers) == 0 || closers[len(closers)-1] != c {
				return -1
			}
			closers = closers[:len(closers)-1]
			if len(closers) == 0 {
				return i + 1
			}
		}
	}
	return -1
}
