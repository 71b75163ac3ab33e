package document

import (
	"fmt"

	"github.com/agentgraph/agentgraph/internal/oneline"
)

// CheckName reports what is wrong with a document's name, if anything:
// a name is shown to models and people on one line, so it must not hold
// a control character (C0, C1 or DEL: newline, NUL, ESC...), a line or
// paragraph separator, a path separator (/ or \), or a character that
// is not seen: a format character (Unicode category Cf: bidi controls,
// zero-width spaces, the soft hyphen...), any other default-ignorable
// code point (variation selectors, Hangul fillers, U+034F...) or the
// blank braille pattern U+2800, which could hide text in a name that
// looks like another.
//
// What scripts and emoji need is kept: a zero width joiner or non-joiner
// (U+200D, U+200C) after a visible character (Persian, Indic and Sinhala
// names, emoji ZWJ sequences such as 👩‍💻), the text and emoji
// presentation selectors (U+FE0E, U+FE0F) after a visible character,
// Mongolian free variation selectors after a Mongolian letter, an emoji
// tag sequence (🏴 followed by at most 7 tag letters or digits and a
// cancel tag: the flags of England, Scotland and Wales), and the visible
// format characters (Arabic number signs, Egyptian hieroglyph controls).
// At most two such invisible characters follow each visible one (a
// selector and a joiner, as in 🏳️‍🌈), outside tag sequences, so a name
// cannot carry hidden bytes of any length.
//
// The answer names the character and the fix; empty means the name is
// fine. [Limits.Check] applies it.
func CheckName(name string) string {
	at, what, where := oneline.Check(name, true)
	if what == "" {
		return ""
	}
	return fmt.Sprintf("holds %s at byte %d%s; send the file's base name on one line, of visible characters, without / or \\, e.g. \"notes.md\"", what, at, where)
}
