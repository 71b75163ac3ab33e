package utf8clip_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/internal/utf8clip"
)

// Clip cuts before a sequence that n falls within, and at n within bytes
// that are not UTF-8: it backs up at most 3 bytes.
func TestClip(t *testing.T) {
	cont := strings.Repeat("\x80", 70)
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"},                      // n within é
		{"a😀b", 4, "a"},                     // n on the last byte of a 4-byte sequence
		{"a😀b", 5, "a😀"},                    // n after it
		{"😀", 3, ""},                        // the first character is longer than n
		{"a" + cont, 64, ("a" + cont)[:64]}, // a run of continuation bytes
		{cont, 2, cont[:2]},
		{"ab\xf0\x9f\x98\x80\x80\x80", 7, "ab\xf0\x9f\x98\x80\x80"}, // a 5-byte "sequence" is not one
	} {
		got := utf8clip.Clip(tc.s, tc.n)
		if got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
		if utf8.ValidString(tc.s) && !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q: cut within a character", tc.s, tc.n, got)
		}
	}
}
