package storeid

import (
	"strings"
	"testing"
)

func TestProblem(t *testing.T) {
	for id, want := range map[string]string{
		"conv-1":                        "",
		strings.Repeat("x", MaxBytes):   "",
		strings.Repeat("x", MaxBytes+1): "more than the limit of 1024",
		"a\xffb":                        "not valid UTF-8",
		"a\x00b":                        "NUL byte",
	} {
		got := Problem(id)
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("Problem(%.20q) = %q, want %q", id, got, want)
		}
	}
	if Storable("a\x00b") || Storable("a\xffb") || !Storable(strings.Repeat("x", 2*MaxBytes)) {
		t.Error("Storable refuses only NUL bytes and invalid UTF-8")
	}
}

// TestTextProblem: any length of valid UTF-8 without NUL passes; the
// problem of another text names the first bad byte, without quoting the
// text.
func TestTextProblem(t *testing.T) {
	long := strings.Repeat("é", MaxBytes)
	for s, want := range map[string]string{
		"":             "",
		"café ✓":       "",
		long:           "",
		"ab\x00c":      "holds a NUL byte (at byte 2)",
		"caf\xe9 \xff": "is not valid UTF-8 (at byte 3)",
		"ok\xff\x00":   "is not valid UTF-8 (at byte 2)",
		"\xf0\x9f\x98": "is not valid UTF-8 (at byte 0)",
	} {
		got := TextProblem(s)
		if want == "" && got != "" || want != "" && !strings.HasPrefix(got, want) {
			t.Errorf("TextProblem(%q) = %q, want %q…", s, got, want)
		}
	}
}
