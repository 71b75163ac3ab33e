package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/agentgraph/agentgraph/memory/jsonnum"
)

// jsonObject is a JSON object of a request (a thread's metadata, a
// search's metadata and values filters) decoded with its numbers as
// json.Number, so that an integer beyond 2^53 keeps its digits: stored,
// answered and compared as sent, where a float64 would round it to its
// neighbour (9007199254740993 to 9007199254740992).
type jsonObject map[string]any

// UnmarshalJSON implements json.Unmarshaler.
func (o *jsonObject) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := decodeNumbers(b, &m); err != nil {
		return err
	}
	*o = m
	return nil
}

// decodeNumbers decodes JSON b into v with its numbers as json.Number.
func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// jsonEqual reports whether a and b are the same JSON value, comparing
// numbers by their exact decimal value (1, 1.0 and 1e0 are equal;
// 9007199254740993 and 9007199254740992 are not), whichever Go type holds
// them (float64, an integer, json.Number).
func jsonEqual(a, b any) bool { return reflect.DeepEqual(canonJSON(a), canonJSON(b)) }

// jsonContains reports whether JSON value have contains want, as
// PostgreSQL's jsonb @> (below the top level) decides it: an object
// contains an object whose every key it has, with a value that contains
// that key's value ({"obj":{"x":1,"y":2}} contains {"obj":{"x":1}}); an
// array contains an array each of whose elements some element of it
// contains, in any order and with repeats ([1,2,3] contains [3,1]); a
// scalar contains only an equal scalar (numbers compared as jsonEqual
// compares them). Values of different kinds contain nothing of each
// other.
func jsonContains(have, want any) bool { return canonContains(canonJSON(have), canonJSON(want)) }

// canonContains is jsonContains on canonJSON's forms.
func canonContains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok || !canonContains(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return false
		}
		for _, wv := range w {
			if !slices.ContainsFunc(h, func(hv any) bool { return canonContains(hv, wv) }) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(have, want)
}

// numKey is a number in canonJSON's form: the canonical text of its
// exact value (see canonNumber).
type numKey string

// canonJSON returns v, a JSON-shaped value, with every number replaced
// by its numKey: values equal as JSON are then reflect.DeepEqual. A value
// of another type is read through its JSON form.
func canonJSON(v any) any {
	switch x := v.(type) {
	case nil, string, bool:
		return x
	case json.Number:
		return canonNumberText(string(x))
	case float64:
		return canonNumberText(strconv.FormatFloat(x, 'g', -1, 64))
	case float32:
		return canonNumberText(strconv.FormatFloat(float64(x), 'g', -1, 32))
	case int:
		return canonNumberText(strconv.FormatInt(int64(x), 10))
	case int64:
		return canonNumberText(strconv.FormatInt(x, 10))
	case int32:
		return canonNumberText(strconv.FormatInt(int64(x), 10))
	case uint:
		return canonNumberText(strconv.FormatUint(uint64(x), 10))
	case uint64:
		return canonNumberText(strconv.FormatUint(x, 10))
	case uint32:
		return canonNumberText(strconv.FormatUint(uint64(x), 10))
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = canonJSON(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = canonJSON(e)
		}
		return c
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if decodeNumbers(b, &out) != nil {
		return v
	}
	return canonJSON(out)
}

// canonNumberText is canonNumber's numKey for s, or, for a text that is
// not a JSON number (a json.Number made in Go), a key no number has.
func canonNumberText(s string) any {
	if c, ok := canonNumber(s); ok {
		return numKey(c)
	}
	return struct{ bad string }{s}
}

// canonNumber returns the canonical text of JSON number s: its sign (for
// a value other than zero), its significant digits without leading or
// trailing zeros, "e" and the exponent that gives the value (so 100,
// 1e2 and 100.0 are all "1e2", 0.5 is "5e-1", -0 is "0"); false when s
// is not a JSON number.
func canonNumber(s string) (string, bool) {
	if !validNumber(s) {
		return "", false
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp, _ := strings.Cut(strings.ToLower(s), "e")
	ip, fp, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(ip+fp, "0")
	if digits == "" {
		return "0", true
	}
	trimmed := strings.TrimRight(digits, "0")
	shift := int64(len(digits)-len(trimmed)) - int64(len(fp)) // |shift| < 2^31: bounded by the text
	var e string
	if exp == "" {
		e = strconv.FormatInt(shift, 10)
	} else if n, err := strconv.ParseInt(exp, 10, 64); err == nil && n > -1<<62 && n < 1<<62 {
		e = strconv.FormatInt(n+shift, 10)
	} else {
		e = addExponent(exp, shift)
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + e, true
}

// addExponent returns the decimal text of exp, an exponent's digits with
// an optional sign and of magnitude 2^62 or more, plus shift: digit by digit,
// in time linear in exp's length (math/big's decimal conversion grows
// with the square of the digits, and an exponent may be as long as a
// request body).
func addExponent(exp string, shift int64) string {
	neg := strings.HasPrefix(exp, "-")
	exp = strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")
	if exp == "" {
		return strconv.FormatInt(shift, 10)
	}
	if shift == 0 {
		if neg {
			return "-" + exp
		}
		return exp
	}
	mag := strconv.FormatUint(uint64(shift), 10)
	if shift < 0 {
		mag = strconv.FormatUint(uint64(-shift), 10)
	}
	if (shift < 0) == neg {
		return signed(neg, addDigits(exp, mag))
	}
	// Opposite signs: exp is longer than mag (|exp| ≥ 2^62 has 19 digits, |shift| < 2^31 at most 10),
	// so its sign wins.
	return signed(neg, subDigits(exp, mag))
}

// signed returns digits with a minus sign when neg (never "-0").
func signed(neg bool, digits string) string {
	if neg && digits != "0" {
		return "-" + digits
	}
	return digits
}

// addDigits returns the decimal sum of a and b, digit strings without
// leading zeros.
func addDigits(a, b string) string {
	if len(a) < len(b) {
		a, b = b, a
	}
	out := make([]byte, len(a)+1)
	carry := byte(0)
	for i := range len(a) {
		d := a[len(a)-1-i] - '0' + carry
		if i < len(b) {
			d += b[len(b)-1-i] - '0'
		}
		carry = d / 10
		out[len(out)-1-i] = '0' + d%10
	}
	if carry > 0 {
		out[0] = '1'
		return string(out)
	}
	return string(out[1:])
}

// subDigits returns the decimal difference a − b of digit strings
// without leading zeros, a ≥ b.
func subDigits(a, b string) string {
	out := []byte(a)
	borrow := byte(0)
	for i := range len(a) {
		d := int(a[len(a)-1-i]-'0') - int(borrow)
		if i < len(b) {
			d -= int(b[len(b)-1-i] - '0')
		}
		borrow = 0
		if d < 0 {
			d += 10
			borrow = 1
		}
		out[len(out)-1-i] = byte('0' + d)
	}
	r := strings.TrimLeft(string(out), "0")
	if r == "" {
		return "0"
	}
	return r
}

// validNumber reports whether s is a JSON number.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
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
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(s)
}

// checkNumbers refuses, in v, a JSON value decoded from the request's
// field, a number that not every store holds alike (see [jsonnum.Bad]),
// naming its path.
func checkNumbers(field string, v any) error {
	rev, num, why, found := jsonnum.Find(v, jsonnum.Bad)
	if !found {
		return nil
	}
	return errorf(422, "%s: the number %s %s; send a number a float64 holds, or the value as a string", clip(field+jsonnum.Path(rev)), clip(num), why)
}
