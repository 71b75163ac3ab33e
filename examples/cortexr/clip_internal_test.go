package cortexr

import (
	"testing"
	"unicode/utf8"
)

// TestClipUTF8 checks that clipping never splits a UTF-8 sequence and
// keeps the longest prefix that fits.
func TestClipUTF8(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"héllo", 2, "h"}, // é is 2 bytes at 1..2
		{"héllo", 3, "hé"},
		{"日本", 4, "日"},
		{"abc", 10, "abc"},
		{"é", 1, ""},
	} {
		got := clipUTF8(c.s, c.n)
		if got != c.want || !utf8.ValidString(got) {
			t.Errorf("clipUTF8(%q, %d) = %q; want %q", c.s, c.n, got, c.want)
		}
	}
	if got := truncate("日本語", 4); got != "日…" {
		t.Errorf("truncate = %q; want %q", got, "日…")
	}
}
