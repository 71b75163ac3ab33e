package offline

import (
	"regexp"
	"strings"
)

// This file holds the frame a follow-up leans on: "what about Starter?"
// after "How much is the Team plan?" and "and for 12 editors per year?"
// asks the whole earlier question (its seats and its period too) about
// Starter, not only Starter's price.

// kindWordRE is a word after a name that says what kind of thing it
// names: "the Team plan", "the Business tier".
var kindWordRE = regexp.MustCompile(`^(?:plan|plans|tier|tiers|edition|package|subscription|product)\b`)

// maxFrame is how many earlier follow-ups a frame reaches back through.
const maxFrame = 4

// followUpFrame returns the earlier question a follow-up q leans on: the
// user's previous message and, while that is itself a follow-up, the
// messages it leans on in turn, oldest first. A name q gives replaces
// the frame's name of the same kind ("Starter" the "Team" of "the Team
// plan", or the frame's only name), and a number of seats q gives
// replaces the frame's, so that the frame names what q asks about and
// nothing it replaced. It returns "" when there is no previous message.
func followUpFrame(conversation, q string) string {
	frame := askedFrame(conversation, q)
	if frame == "" {
		return ""
	}
	return reframe(frame, q)
}

// askedFrame returns the user's previous message and, while that is a
// follow-up, the messages it leans on in turn, oldest first, as they were
// written; or "" when there is no previous message. A search reads all
// their words; an answer reads followUpFrame's, with q's names in place.
func askedFrame(conversation, q string) string {
	prev := previousQuestion(conversation, q)
	if prev == "" {
		return ""
	}
	frame, cur := prev, prev
	for range maxFrame {
		if !isFollowUp(tokens(cur)) {
			break
		}
		before := questionBefore(conversation, cur)
		if before == "" || isCorrection(before) || before == cur {
			break
		}
		frame, cur = before+" "+frame, before
	}
	return frame
}

// reframe returns frame with the names and the number of seats that q
// gives in place of its own.
func reframe(frame, q string) string {
	for _, name := range namesIn(q) { // not q's first word: "Is it billed annually?"
		if isAcronym(name) {
			continue
		}
		if containsName(frame, name) {
			continue // "and Team for 12 editors?": already the frame's
		}
		olds := replaceableNames(frame)
		for _, old := range olds {
			frame = replaceName(frame, old, name)
		}
		if len(olds) > 0 {
			break // one name replaces; a second one is q's own
		}
	}
	if n := seatCount(q); n > 0 && seatCount(frame) > 0 {
		spelled := spellNumbers(frame)
		if m := seatCountRE.FindStringSubmatchIndex(strings.ToLower(spelled)); m != nil {
			i, j := m[2], m[3]
			if i < 0 {
				i, j = m[6], m[7]
			}
			frame = spelled[:i] + spelled[j:] // q's number stands alone
			frame = strings.Join(strings.Fields(frame), " ")
		}
	}
	return frame
}

// replaceableNames returns the names of frame a new name of the same kind
// replaces: those followed by a word for a kind ("Team plan"), or else the
// frame's only name that is not an acronym.
func replaceableNames(frame string) []string {
	var kinded, plain []string
	fields := strings.Fields(frame)
	for i, f := range fields {
		name := strings.TrimFunc(f, func(r rune) bool { return !isWordRune(r) })
		if i == 0 || name == "" || name == "I" || isAcronym(name) || !isUpperStart(name) {
			continue
		}
		if i > 0 && strings.ContainsAny(fields[i-1], "?.!") {
			continue // the first word of a sentence, not a name
		}
		plain = append(plain, name)
		if i+1 < len(fields) && kindWordRE.MatchString(strings.ToLower(fields[i+1])) && !strings.ContainsAny(f[len(f)-1:], "?.!,;:") {
			kinded = append(kinded, name)
		}
	}
	if len(kinded) > 0 {
		return dedupe(kinded)
	}
	if plain = dedupe(plain); len(plain) == 1 {
		return plain
	}
	return nil
}

// containsName reports whether name is one of the words of s.
func containsName(s, name string) bool {
	for _, f := range strings.Fields(s) {
		if strings.EqualFold(strings.TrimFunc(f, func(r rune) bool { return !isWordRune(r) }), name) {
			return true
		}
	}
	return false
}

// replaceName replaces every whole word old of s with name.
func replaceName(s, old, name string) string {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(old) + `\b`)
	return re.ReplaceAllLiteralString(s, name)
}

func isWordRune(r rune) bool {
	return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127
}

func isUpperStart(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }

func dedupe(s []string) []string {
	var out []string
	for _, x := range s {
		if !containsName(strings.Join(out, " "), x) {
			out = append(out, x)
		}
	}
	return out
}
