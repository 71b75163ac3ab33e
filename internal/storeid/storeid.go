// Package storeid checks the ids that the stores of memory, document and
// cognition hold alike (a conversation id, a user id, an owner): one limit
// and one check, so that an id one package accepts every other accepts too.
package storeid

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxBytes is the longest id accepted, in bytes. It matches
// checkpoint.MaxIDLen, so that a conversation id is also a thread id.
const MaxBytes = 1024

// Problem says what is wrong with a non-empty id, with the fix, or returns
// "": longer than [MaxBytes], not valid UTF-8 or holding a NUL byte (which
// PostgreSQL's text refuses). The caller checks emptiness, which it names
// in its own words.
func Problem(id string) string {
	switch {
	case len(id) > MaxBytes:
		return fmt.Sprintf("is %d bytes long, more than the limit of %d (MaxIDBytes); use a shorter id", len(id), MaxBytes)
	case !utf8.ValidString(id):
		return fmt.Sprintf("%q is not valid UTF-8; use UTF-8 text", id)
	case strings.IndexByte(id, 0) >= 0:
		return fmt.Sprintf("%q holds a NUL byte; remove it", id)
	}
	return ""
}

// TextProblem says what is wrong with a stored text of any length, with
// the fix, or returns "": not valid UTF-8, or holding a NUL byte (which
// PostgreSQL's text and jsonb refuse, and which JSON would not keep as
// sent). Unlike [Problem] it does not quote the text, which may be long.
func TextProblem(s string) string {
	if !utf8.ValidString(s) {
		i := 0
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return fmt.Sprintf("is not valid UTF-8 (at byte %d); use UTF-8 text", i)
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		return fmt.Sprintf("holds a NUL byte (at byte %d); remove it", i)
	}
	return ""
}

// Storable reports whether every store can hold or look up id: valid
// UTF-8 without NUL bytes, of any length. A read or delete with an id that
// is not storable finds nothing, rather than failing in the database.
func Storable(id string) bool {
	return utf8.ValidString(id) && strings.IndexByte(id, 0) < 0
}
