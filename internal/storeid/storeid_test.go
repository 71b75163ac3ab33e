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
