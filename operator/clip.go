package operator

import (
	"strconv"
	"unicode/utf8"
)

// clipUTF8 returns s cut to at most n bytes, not within a UTF-8 sequence.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
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
