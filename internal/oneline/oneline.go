// Package oneline checks that a text a model or a person reads on one line
// (a document's name, a learned preference) holds only characters that
// are seen, so that it can neither add a line nor hide text.
package oneline

import (
	"fmt"
	"unicode"
)

// Characters that [Check] lets through in some places only.
const (
	zwnj         = '\u200c' // zero width non-joiner: Persian, Indic
	zwj          = '\u200d' // zero width joiner: Indic, Sinhala, emoji sequences
	textStyle    = '\ufe0e' // variation selector 15: show as text
	emojiStyle   = '\ufe0f' // variation selector 16: show as emoji
	blackFlag    = '\U0001f3f4'
	cancelTag    = '\U000e007f'
	maxTagLetter = 7 // a subdivision id: a region of 2 or 3 and at most 4 more
)

// Check reports the first character of s that keeps it from being shown
// on one line of visible characters, if any: a control character (C0, C1
// or DEL: newline, NUL, ESC...), a line or paragraph separator, with
// pathSeparators a path separator (/ or \), or a character that is not
// seen: a format character (Unicode category Cf: bidi controls, zero-width
// spaces, the soft hyphen...), any other default-ignorable code point
// (variation selectors, Hangul fillers, U+034F...) or the blank braille
// pattern U+2800, which could hide text in a string that looks like
// another.
//
// What scripts and emoji need is kept: a zero width joiner or non-joiner
// (U+200D, U+200C) after a visible character (Persian, Indic and Sinhala
// words, emoji ZWJ sequences such as 👩‍💻), the text and emoji
// presentation selectors (U+FE0E, U+FE0F) after a visible character,
// Mongolian free variation selectors after a Mongolian letter, an emoji
// tag sequence (🏴 followed by at most 7 tag letters or digits and a
// cancel tag: the flags of England, Scotland and Wales), and the visible
// format characters (Arabic number signs, Egyptian hieroglyph controls).
// At most two such invisible characters follow each visible one (a
// selector and a joiner, as in 🏳️‍🌈), outside tag sequences, so a string
// cannot carry hidden bytes of any length.
//
// what is empty when s is fine; otherwise it names the character, at is
// its byte offset (len(s) for a tag sequence left open) and where, empty
// or starting with ", ", says why it is refused there.
func Check(s string, pathSeparators bool) (at int, what, where string) {
	prev := rune(-1) // the rune before, -1 at the start
	visible := false // prev is a character seen, not one of the kept invisible ones
	tags := -1       // tag letters since the black flag, -1 outside a tag sequence
	for i, r := range s {
		if tags > 0 && !isTagLetter(r) && r != cancelTag {
			return i, "the end of an emoji tag sequence", " without its cancel tag U+E007F"
		}
		var what, where string
		kept := false // r is invisible but allowed where it is
		switch {
		case pathSeparators && (r == '/' || r == '\\'):
			what = fmt.Sprintf("a path separator %q", r)
		case unicode.IsControl(r):
			what = fmt.Sprintf("the control character %U", r)
		case unicode.In(r, unicode.Zl, unicode.Zp):
			what = fmt.Sprintf("the line separator %U", r)
		case r == zwj || r == zwnj:
			if !visible && prev != textStyle && prev != emojiStyle {
				what, where = fmt.Sprintf("the joiner %U", r), ", not after a visible character"
			}
			kept = true
		case r == textStyle || r == emojiStyle:
			if !visible {
				what, where = fmt.Sprintf("the variation selector %U", r), ", not after a visible character"
			}
			kept = true
		case r >= '\u180b' && r <= '\u180f' && r != '\u180e': // Mongolian free variation selectors
			if !visible || !unicode.Is(unicode.Mongolian, prev) {
				what, where = fmt.Sprintf("the Mongolian variation selector %U", r), ", not after a Mongolian letter"
			}
			kept = true
		case isTagLetter(r):
			if tags < 0 || tags >= maxTagLetter {
				what, where = fmt.Sprintf("the invisible tag character %U", r), ", not in an emoji flag of at most 7 tags"
			}
			tags++
			kept = true
		case r == cancelTag:
			if tags <= 0 {
				what, where = fmt.Sprintf("the invisible tag character %U", r), ", not ending an emoji flag"
			}
			tags = -1
			kept = true
		case unicode.In(r, unicode.Prepended_Concatenation_Mark) || r >= 0x13430 && r <= 0x1343f:
			// visible format characters
		case unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point):
			what = fmt.Sprintf("the invisible character %U", r)
		case r == '\u2800':
			what = fmt.Sprintf("the blank character %U", r)
		}
		if what != "" {
			return i, what, where
		}
		if r == blackFlag {
			tags = 0
		} else if !isTagLetter(r) {
			tags = -1
		}
		prev, visible = r, !kept
	}
	if tags > 0 {
		return len(s), "the end of an emoji tag sequence", " without its cancel tag U+E007F"
	}
	return 0, "", ""
}

// isTagLetter reports whether r is a tag digit or lower-case tag letter,
// of which an emoji tag sequence spells a subdivision ("gbeng").
func isTagLetter(r rune) bool {
	return r >= 0xe0030 && r <= 0xe0039 || r >= 0xe0061 && r <= 0xe007a
}
