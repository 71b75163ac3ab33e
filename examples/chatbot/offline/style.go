package offline

import (
	"strconv"
	"strings"

	"github.com/agentgraph/agentgraph/cognition"
)

// This file holds how what the model knows about the user shapes its
// answers: the name in a greeting, questions about the user answered from
// the profile, and the style (concise, detailed) and format (bullet
// points) the user asked for, whether cognition remembered it from an
// earlier conversation ("User profile:" lines in the prompt's
// Conversation section) or the user said it earlier in this one.

// userOf returns what is known about the user of a prompt: the "User
// profile:" block of its conversation context, then what the user's
// messages in the conversation and the current question say, the later
// winning.
func userOf(conversation, current string) about {
	var a about
	in := false
	for _, line := range strings.Split(conversation, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "User profile:":
			in = true
			continue
		case !in:
			continue
		case !strings.HasPrefix(line, "- "):
			in = false
			continue
		}
		key, val, ok := profileFact(strings.TrimPrefix(line, "- "))
		if !ok {
			continue
		}
		switch key {
		case "Expertise":
			a.expertise = cognition.Expertise(val)
		case "Style preference":
			a.style = cognition.Style(val)
		case "Interests":
			a.interests = unquoteAll(strings.Split(val, ", "))
		case "Prefers name":
			a.name = val
		case "Prefers role":
			a.role = val
		case "Prefers organization":
			a.org = val
		case "Prefers format":
			a.format = val
		case "Prefers tone":
			a.tone = val
		case "Prefers work":
			a.work = val
		}
	}
	msgs := userMessages(conversation, current)
	if current = strings.TrimSpace(current); current != "" {
		msgs = append(msgs, current)
	}
	return a.merge(readAbout(msgs))
}

// profileFact splits one fact of cognition's profile ("Expertise:
// expert", "Prefers \"name\": \"Ada\"", where learned text is quoted)
// into its key ("Prefers name") and value, unquoted.
func profileFact(fact string) (key, val string, ok bool) {
	if rest, pref := strings.CutPrefix(fact, "Prefers "); pref && strings.HasPrefix(rest, `"`) {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return "", "", false
		}
		if val, ok = strings.CutPrefix(rest[len(q):], ": "); !ok {
			return "", "", false
		}
		k, _ := strconv.Unquote(q)
		return "Prefers " + k, unquoteAll([]string{val})[0], true
	}
	return strings.Cut(fact, ": ")
}

// unquoteAll returns vals with each quoted one unquoted.
func unquoteAll(vals []string) []string {
	for i, v := range vals {
		if u, err := strconv.Unquote(v); err == nil {
			vals[i] = u
		}
	}
	return vals
}

// asksAboutUser reports whether the question asks what the assistant
// knows about the user ("What is my name?", "What do I do?", "What do you
// know about me?").
func asksAboutUser(w []string) bool {
	s := " " + strings.Join(w, " ") + " "
	asks := hasAny(w, "what", "what's", "whats", "know", "remember", "who", "where", "which")
	return asks && (hasAny(w, "my") && hasAny(w, "name", "preferences", "preference", "job", "role", "profession", "occupation", "title", "company", "employer") ||
		hasAny(w, "me") && hasAny(w, "about") && hasAny(w, "know", "remember", "learned", "learnt") ||
		strings.Contains(s, " who am i ") || strings.Contains(s, " what do i do ") || strings.Contains(s, " where do i work ") ||
		strings.Contains(s, " what is my line of work ") || strings.Contains(s, " do you remember me "))
}

// aboutUser answers a question about the user from what is known.
func aboutUser(w []string, u about) string {
	var facts []string
	if u.role != "" {
		f := "you are " + article(u.role) + " " + u.role
		if u.org != "" {
			f += " at " + u.org
		}
		facts = append(facts, f)
	} else if u.org != "" {
		facts = append(facts, "you work at "+u.org)
	}
	if u.work != "" {
		facts = append(facts, "you work "+u.work)
	}
	if u.expertise != "" {
		facts = append(facts, "your expertise: "+string(u.expertise))
	}
	if len(u.interests) > 0 {
		facts = append(facts, "your interests: "+strings.Join(u.interests[:min(5, len(u.interests))], ", "))
	}
	if u.style != "" || u.format != "" {
		f := "you like " + strings.TrimSpace(string(u.style)+" answers")
		if u.format != "" {
			f += " in " + u.format
		}
		facts = append(facts, f)
	}
	if u.tone != "" {
		facts = append(facts, "you like "+u.tone)
	}
	switch {
	case u.name == "" && len(facts) == 0:
		return "I don't know anything about you yet. Tell me (your name, what you do, how you like your answers) and, if I can remember users, I will."
	case hasAny(w, "name") && !hasAny(w, "job", "role", "about"):
		if u.name == "" {
			return "You haven't told me your name yet."
		}
		return "Your name is " + u.name + "."
	case hasAny(w, "job", "role", "profession", "occupation", "title", "do") && !hasAny(w, "about", "know"):
		if u.role == "" {
			return "You haven't told me what you do yet."
		}
		return upperFirst(facts[0]) + "."
	case hasAny(w, "company", "employer", "where") && !hasAny(w, "about"):
		if u.org == "" {
			return "You haven't told me where you work yet."
		}
		return "You work at " + u.org + "."
	}
	if u.name != "" {
		facts = append([]string{"your name is " + u.name}, facts...)
	}
	if u.format != "" || u.style == cognition.Detailed {
		return "Here is what I know about you:\n- " + strings.Join(facts, "\n- ")
	}
	return "Here is what I know about you: " + strings.Join(facts, "; ") + "."
}

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// saysAboutSelf reports whether q tells the assistant about the user
// (who they are, how they like their answers) without asking anything.
func saysAboutSelf(q string) bool {
	if strings.Contains(q, "?") || readMessage(q).empty() {
		return false
	}
	for _, clause := range clauseRE.Split(q, -1) {
		w := tokens(clause)
		if len(w) > 0 && hasAny(w[:1], "what", "how", "which", "when", "where", "why", "who", "can", "could", "tell", "show",
			"explain", "compare", "calculate", "compute", "find", "search", "book", "run", "plot", "chart", "list", "describe") {
			return false
		}
	}
	return true
}

// acknowledge answers a user telling about themselves, saying what the
// assistant will do with it.
func acknowledge(q string) string {
	a := readMessage(q)
	s := "Thanks for telling me."
	if a.name != "" {
		s = "Nice to meet you, " + a.name + "!"
	}
	if a.role != "" {
		s += " Good to know you're " + article(a.role) + " " + a.role + "."
	}
	switch a.style {
	case cognition.Concise:
		s += " I'll keep my answers short."
	case cognition.Detailed:
		s += " I'll give you detailed answers."
	case cognition.Technical:
		s += " I'll keep my answers technical."
	}
	if a.format != "" {
		s += " I'll use " + a.format + "."
	}
	if a.style == cognition.Concise {
		return s + " What do you need?"
	}
	return s + " What would you like to know?"
}

// styled shapes a free-text answer (a definition, a summary of what is
// known) to the user's style and format: concise keeps the first
// sentence, a list format puts each sentence on a line of its own.
func styled(text string, u about) string {
	if u.style == cognition.Concise {
		if s := firstSentence(text); s != "" {
			text = s
		}
	}
	if u.format == "" || strings.Contains(text, "\n- ") {
		return text
	}
	var out []string
	for _, s := range sentencesOf(text) {
		out = append(out, s.text)
	}
	if len(out) == 0 {
		return text
	}
	if u.format == "numbered lists" {
		var b strings.Builder
		for i, s := range out {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strconv.Itoa(i+1) + ". " + s)
		}
		return b.String()
	}
	return "- " + strings.Join(out, "\n- ")
}
