// Package jsonnum holds the rule for the JSON numbers every store keeps
// alike, shared by the memory stores, the agent server and applications
// that check a request's numbers before they reach a store.
//
// PostgreSQL's jsonb keeps a number as a numeric, which refuses some
// numbers SQLite and memory keep (1e999999999, 0e-20000, a number of
// 200000 digits), and JavaScript clients read others as Infinity or 0
// (1e400, 1e-400). [Bad] names every such number, so that each store
// refuses the same values, before any of them is written.
package jsonnum

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// MaxLen bounds the text of a number [Bad] accepts.
const MaxLen = 1000

// MaxZeroExponent bounds the exponent written on a zero [Bad] accepts
// (0e-400 is accepted, 0e-401 refused).
const MaxZeroExponent = 400

// Bad reports why JSON number s is one not every store holds alike, if
// it is: one beyond a float64's range (of magnitude above
// 1.7976931348623157e308), one so small that a float64 rounds it to zero
// (of magnitude at most half of 5e-324, the smallest float64, and not
// zero: 3e-324 is accepted, read as 5e-324), a zero written with an
// exponent beyond ±MaxZeroExponent (0e-20000), or one written in more
// than MaxLen characters. PostgreSQL's numeric refuses the first and the
// last two kinds (it has at most 131072 digits before the point and 16383
// after it, and the exponent of 0e-20000 gives it 20000), and JavaScript
// clients read the first two as Infinity or 0.
func Bad(s string) (why string, bad bool) {
	if len(s) > MaxLen {
		return fmt.Sprintf("has %d characters, more than %d", len(s), MaxLen), true
	}
	if why, bad := Overflows(s); bad {
		return why, true
	}
	if f, _ := strconv.ParseFloat(s, 64); f == 0 {
		mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
		if strings.ContainsAny(mant, "123456789") {
			return "is too small for a float64, which rounds it to 0 (magnitude above 2.5e-324, or 0)", true
		}
		if hasExp {
			if n, err := strconv.ParseInt(exp, 10, 64); err != nil || n < -MaxZeroExponent || n > MaxZeroExponent {
				return fmt.Sprintf("is zero with an exponent beyond ±%d; write it as 0", MaxZeroExponent), true
			}
		}
	}
	return "", false
}

// Overflows reports whether JSON number s is beyond a float64's range,
// and says so.
func Overflows(s string) (why string, bad bool) {
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return "is beyond a float64's range (magnitude at most 1.7976931348623157e308)", true
	}
	return "", false
}

// Find reports whether v, a JSON value decoded with its numbers as
// json.Number, holds a number that bad refuses, and where the first one
// (in v's order, which for an object's members is Go's map order) is: the
// steps of its path innermost first (".key", "[index]"), the number's
// text and why bad refuses it.
func Find(v any, bad func(string) (string, bool)) (rev []string, num, why string, found bool) {
	switch x := v.(type) {
	case json.Number:
		if why, bad := bad(string(x)); bad {
			return nil, string(x), why, true
		}
	case map[string]any:
		for k, e := range x {
			if rev, num, why, found = Find(e, bad); found {
				return append(rev, "."+k), num, why, true
			}
		}
	case []any:
		for i, e := range x {
			if rev, num, why, found = Find(e, bad); found {
				return append(rev, "["+strconv.Itoa(i)+"]"), num, why, true
			}
		}
	}
	return nil, "", "", false
}

// Path joins the steps rev of a path, innermost first as [Find] gives
// them, outermost first.
func Path(rev []string) string {
	var b strings.Builder
	for i := len(rev) - 1; i >= 0; i-- {
		b.WriteString(rev[i])
	}
	return b.String()
}
