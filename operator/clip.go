package operator

import (
	"strconv"
	"unicode/utf8"
)

// clipUTF8 returns s cut to at most n bytes, not within a UTF-8 sequence:
// it backs up over at most utf8.UTFMax-1 continuation bytes, the most a
// valid sequence has. Bytes that are not valid UTF-8 (a longer run of
// continuation bytes) are cut at n: such a run never shrinks the result
// further, to nothing.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := n; i >= 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i]
		}
	}
	return s[:n]
}

// quoteName returns the tool name a caller asked for, quoted for a text
// the model or a person reads: cut to [MaxToolNameLen] bytes, and saying
// from how many, when longer. No tool has a longer name, and the caller
// (a model) may have written any number of bytes.
func quoteName(name string) string {
	if len(name) <= MaxToolNameLen {
		return strconv.Quote(name)
	}
	return strconv.Quote(clipUTF8(name, MaxToolNameLen)) + " (cut from " + strconv.Itoa(len(name)) + " bytes)"
}
