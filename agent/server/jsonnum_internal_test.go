package server

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// TestAddExponent checks addExponent against math/big on exponents too
// long for an int64, of either sign, with shifts of either sign.
func TestAddExponent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := 19 + r.IntN(40)
		var b strings.Builder
		b.WriteByte(byte('1' + r.IntN(9)))
		for range n - 1 {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		digits := b.String()
		if r.IntN(4) == 0 { // runs of nines and zeros carry and borrow far
			digits = "1" + strings.Repeat([]string{"0", "9"}[r.IntN(2)], n-1)
		}
		exp := []string{"", "+", "-"}[r.IntN(3)] + strings.Repeat("0", r.IntN(3)) + digits
		shift := r.Int64N(1<<32) - 1<<31
		var want big.Int
		want.SetString(strings.TrimPrefix(exp, "+"), 10)
		want.Add(&want, big.NewInt(shift))
		if got := addExponent(exp, shift); got != want.String() {
			t.Fatalf("addExponent(%s, %d) = %s; want %s", exp, shift, got, want.String())
		}
	}
	for _, c := range []struct {
		exp   string
		shift int64
		want  string
	}{
		{"000", 5, "5"}, {"-0", -5, "-5"}, {"+12", 0, "12"}, {"-12", 0, "-12"},
	} {
		if got := addExponent(c.exp, c.shift); got != c.want {
			t.Errorf("addExponent(%s, %d) = %s; want %s", c.exp, c.shift, got, c.want)
		}
	}
}

// TestCanonNumberLongExponent: numbers with exponents of a thousand
// digits and more compare by value (10e…8 equals 1e…9), at a cost linear
// in their length. An exponent of over 1,000 digits was compared as
// written, so two spellings of one value were unequal.
func TestCanonNumberLongExponent(t *testing.T) {
	long := strings.Repeat("7", 200_000)
	a, ok1 := canonNumber("1e" + long + "9")
	b, ok2 := canonNumber("10e" + long + "8")
	c, ok3 := canonNumber("1.0e" + long + "9")
	if !ok1 || !ok2 || !ok3 || a != b || a != c {
		t.Fatalf("1e%[1]s9, 10e%[1]s8 and 1.0e%[1]s9 canonicalise apart (%.40[2]s..., %.40[3]s..., %.40[4]s...)", long[:5]+"...", a, b, c)
	}
	if d, _ := canonNumber("1e" + long + "8"); d == a {
		t.Fatal("1e…8 and 1e…9 canonicalise alike")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _ = canonNumber("-12.5e-" + long)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 10*uint64(len(long)) {
		t.Errorf("canonNumber of a %d-digit exponent allocated %d bytes; want linear", len(long), n)
	}
	if !jsonEqual(map[string]any{"n": json.Number("5e-" + long + "0")}, map[string]any{"n": json.Number("50e-" + long + "1")}) {
		t.Error("jsonEqual: 5e-…70 and 50e-…71 differ")
	}
}
