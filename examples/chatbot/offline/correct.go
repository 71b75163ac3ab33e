package offline

import (
	"regexp"
	"slices"
	"strings"
)

// This file holds corrections: a message that takes back part of the
// previous question ("no, I meant the Business plan", "sorry, I mean for
// 20 editors", "actually, Starter"). The previous question is asked again
// with the correction in place of what it replaces.

// correctionRE finds a correction's opening and keeps what follows it.
var correctionRE = regexp.MustCompile(`(?i)^\s*(?:(?:no|nope|sorry|oops|wait|not that)[\s,.!-]+)*(?:i\s+meant|i\s+mean|i\s+was\s+asking\s+about|actually|rather|make\s+that|correction:?)[\s,:]+(.+?)[\s?.!]*$`)

// correctionArticleRE is the article or preposition a correction may
// start with.
var correctionArticleRE = regexp.MustCompile(`(?i)^(?:the|a|an|for|about|on|in)\s+`)

// numberRE is a whole or decimal number.
var numberRE = regexp.MustCompile(`\d+(?:\.\d+)?`)

// isCorrection reports whether q corrects an earlier question ("no, I
// meant the Business plan"), whether or not there is one.
func isCorrection(q string) bool { return mayCorrect(q) && correctionRE.MatchString(q) }

// withCorrection returns p with its question replaced by the previous
// question corrected when the question is a correction ("no, I meant the
// Business plan"): every rule, and the results, then answer the question
// meant, not the words of the correction. A greeting the question opens
// with ("Hi! What does Team cost?") is left out first.
func withCorrection(p prompt) prompt {
	p.question = withoutGreeting(p.question)
	if c := corrected(strings.TrimSpace(p.question), p.conversation); c != "" {
		p.question = c
	}
	return p
}

// corrected returns the previous question with the correction q applied,
// or "" when q is not a correction or there is no previous question. A
// name in the correction ("Business") replaces the previous question's
// first name it does not share; a number replaces its first number;
// anything else is added to it.
func corrected(q, conversation string) string {
	if !mayCorrect(q) {
		return "" // most messages: no regular expression run
	}
	m := correctionRE.FindStringSubmatch(q)
	if m == nil {
		return ""
	}
	fix := replaceAll(correctionArticleRE, strings.TrimSpace(m[1]), "")
	prev := correctable(conversation, q, fix)
	if prev != "" && correctionRE.MatchString(prev) {
		// "sorry, I meant Team", then "no, I meant 6 seats": correct the
		// question the first correction made.
		prev = corrected(prev, conversationBefore(conversation, prev))
	}
	if prev == "" {
		return ""
	}
	if isFollowUp(tokens(prev)) {
		// "and for 4 seats per year?" leans on the question before it,
		// which holds what the correction replaces.
		if first := questionBefore(conversation, prev); first != "" && !correctionRE.MatchString(first) {
			prev = strings.TrimSpace(first) + " " + prev
		}
	}
	w := tokens(fix)
	if arithmetic(fix) != "" || hasAny(w[:min(1, len(w))], questionWords...) && !refersBack(w) {
		return fix // "no, I meant 12 times 5": a whole question of its own
	}
	if len(namesIn("x "+fix)) == 0 && !numberRE.MatchString(spellNumbers(strings.ToLower(fix))) && (refersBack(w) || len(w) > 6) {
		return "" // "I mean it is expensive": a remark, not a correction
	}
	if n := numberRE.FindString(spellNumbers(strings.ToLower(fix))); n != "" {
		if old := numberRE.FindStringIndex(prev); old != nil {
			return prev[:old[0]] + n + prev[old[1]:]
		}
	}
	for _, name := range namesIn("x " + fix) {
		for _, old := range namesIn(prev) {
			if strings.EqualFold(old, name) {
				break
			}
			if isAcronym(old) != isAcronym(name) {
				continue // "Business" replaces a plan's name, not "SSO"
			}
			if i := strings.Index(prev, old); i >= 0 {
				return prev[:i] + name + prev[i+len(old):]
			}
		}
	}
	return strings.TrimRight(prev, "?.! ") + " " + fix + "?"
}

// correctable returns the user's earlier message that the correction
// fix (what follows "I meant") corrects: the latest that asks something
// (a greeting or thanks in between corrects nothing) and, among the last
// three such, the latest that has (with the question it leans on, for a
// follow-up) what fix would replace, a number for a
// number and a name for a name ("sorry, I meant Business" after "What is
// 2+2?" corrects the question before, about a plan). It returns "" when
// there is no earlier message.
func correctable(conversation, q, fix string) string {
	msgs := userMessages(conversation, q)
	var asks []string
	for i := len(msgs) - 1; i >= 0 && len(asks) < 4; i-- {
		w := tokens(msgs[i])
		if msgs[i] == strings.TrimSpace(q) || isGreeting(w) || isThanks(w) || len(w) == 0 {
			continue
		}
		asks = append(asks, msgs[i])
	}
	if len(asks) == 0 {
		return ""
	}
	wantNumber := numberRE.MatchString(spellNumbers(strings.ToLower(fix)))
	var names []string
	for _, n := range namesIn("x " + fix) {
		if !isAcronym(n) {
			names = append(names, n)
		}
	}
	for i, a := range asks[:min(3, len(asks))] {
		with := a
		if isFollowUp(tokens(a)) && i+1 < len(asks) {
			// "and for 4 seats per year?" has what the question it
			// leans on has.
			with = asks[i+1] + " " + a
		}
		switch {
		case correctionRE.MatchString(a):
			return a // a correction of its own: corrected() reads what it corrects
		case wantNumber && numberRE.MatchString(spellNumbers(strings.ToLower(with))):
			return a
		case !wantNumber && len(names) > 0 && slices.ContainsFunc(namesIn(with), func(n string) bool { return !isAcronym(n) }):
			return a
		case !wantNumber && len(names) == 0:
			return a
		}
	}
	return asks[0]
}

// questionBefore returns the user's message before the last one that is
// msg in the conversation, without the greeting it opens with, or "".
func questionBefore(conversation, msg string) string {
	lines := strings.Split(conversation, "\n")
	seen := false
	for i := len(lines) - 1; i >= 0; i-- {
		m, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "user:")
		if m = strings.TrimSpace(m); !ok || m == "" {
			continue
		}
		if seen {
			return withoutGreeting(m)
		}
		seen = m == strings.TrimSpace(msg)
	}
	return ""
}

// conversationBefore returns the conversation up to the last user
// message that is msg, without it (all of it when msg is not there).
func conversationBefore(conversation, msg string) string {
	lines := strings.Split(conversation, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if m, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "user:"); ok && strings.TrimSpace(m) == strings.TrimSpace(msg) {
			return strings.Join(lines[:i], "\n")
		}
	}
	return conversation
}

// isAcronym reports whether a name is written in capitals ("SSO", "API").
func isAcronym(name string) bool {
	return len(name) > 1 && strings.ToUpper(name) == name
}

// mayCorrect reports whether q holds a word a correction opens with, a
// cheap test before correctionRE.
func mayCorrect(q string) bool {
	l := strings.ToLower(q)
	for _, w := range []string{"mean", "actually", "rather", "make that", "correction", "asking about"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}
