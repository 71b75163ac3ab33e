// Package utf8clip cuts a text to a number of bytes without cutting a
// UTF-8 sequence in two.
package utf8clip

import "unicode/utf8"

// Clip returns s cut to at most n bytes, not within a UTF-8 sequence: it
// backs up over at most utf8.UTFMax-1 continuation bytes, the most a valid
// sequence has. Bytes that are not valid UTF-8 (a longer run of
// continuation bytes) are cut at n: such a run never shrinks the result
// further, to nothing.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for i := n; i >= 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i]
		}
	}
	return s[:n]
}
