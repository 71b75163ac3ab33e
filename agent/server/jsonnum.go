package server

import (
	"bytes"
	"encoding/json"
	"math/big"
	"reflect"
	"strconv"
	"strings"
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

// maxBigExponent bounds the digits of an exponent canonNumber adds to
// with math/big (a longer one, which no store keeps, is compared as
// written): big.Int's decimal conversion grows with the square of the
// digits.
const maxBigExponent = 1000

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
	} else if len(exp) <= maxBigExponent {
		var b big.Int
		b.SetString(strings.TrimPrefix(exp, "+"), 10)
		e = b.Add(&b, big.NewInt(shift)).String()
	} else {
		// An exponent of more than maxBigExponent digits: as written, so
		// that an equal value written otherwise compares unequal.
		e = exp + "~" + strconv.FormatInt(shift, 10)
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + e, true
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
