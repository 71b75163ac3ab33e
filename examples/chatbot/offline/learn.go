package offline

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/agentgraph/agentgraph/cognition"
)

// isLearnPrompt reports whether human is the prompt of
// cognition.LLMLearner, which starts with cognition.MarkerLearn.
func isLearnPrompt(human string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(human), "\n")
	return strings.TrimSpace(first) == cognition.MarkerLearn
}

// Patterns of what users say about themselves. Each captures the value up
// to the end of its clause.
var (
	nameRE    = regexp.MustCompile(`\b(?:[Mm]y name is|[Cc]all me)\s+(\p{L}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*)?)`)
	preferRE  = regexp.MustCompile(`(?i)\bI(?:\s+would|'d)?\s+prefer\s+([^.,;!?]+?)(?:\s+(?:and|but)\s+|[.,;!?]|$)`)
	workRE    = regexp.MustCompile(`(?i)\bI(?:\s+am|'m)?\s+(?:work|working)\s+(on|at|in|with)\s+([^.,;!?]+?)(?:\s+(?:and|but)\s+|[.,;!?]|$)`)
	noviceRE  = regexp.MustCompile(`(?i)\b(?:I'm|I am)\s+(?:a\s+)?(?:beginner|new to|novice)\b`)
	expertRE  = regexp.MustCompile(`(?i)\b(?:I'm|I am)\s+(?:an?\s+)?(?:expert|senior|professional)\b`)
	outcomeRE = regexp.MustCompile(`(?m)^Outcome: (\w+)$`)
)

// learn answers cognition.LLMLearner's prompt with rules: from the user's
// messages of the "## Turn" section it takes a stated name, preferences
// ("I prefer short answers": the style too; the key is the
// preference's last word), what the user works on (an
// interest) and their expertise, each stated fact also an episode; a
// failed turn's question is a knowledge gap. A turn that says nothing
// about the user teaches nothing.
func learn(human string) cognition.Learning {
	turn := human
	if _, after, ok := strings.Cut(human, "\n## Turn\n"); ok {
		turn = after
	}
	var said []string
	for _, line := range strings.Split(turn, "\n") {
		if msg, ok := strings.CutPrefix(line, "user: "); ok {
			said = append(said, strings.TrimSpace(msg))
		}
	}
	out := cognition.Learning{Episodes: []cognition.EpisodeDraft{}}
	prefs := map[string]string{}
	for _, msg := range said {
		if m := nameRE.FindStringSubmatch(msg); m != nil {
			name := capitalize(m[1])
			prefs["name"] = name
			out.Episodes = append(out.Episodes, cognition.EpisodeDraft{
				Summary: "The user's name is " + name + ".", Topics: []string{"name"}, Importance: 0.8})
		}
		for _, m := range preferRE.FindAllStringSubmatch(msg, -1) {
			what := strings.TrimSpace(m[1])
			if what == "" {
				continue
			}
			key := "general"
			if w := strings.Fields(strings.ToLower(what)); len(w) > 1 {
				key = w[len(w)-1]
			}
			prefs[limit(key, 40)] = limit(what, 200)
			if s := styleOf(what); s != "" {
				out.Profile.Style = s
			}
		}
		if m := workRE.FindStringSubmatch(msg); m != nil {
			what := strings.TrimSpace(m[2])
			prefs["work"] = limit(strings.ToLower(m[1])+" "+what, 200)
			out.Profile.Interests = append(out.Profile.Interests, topicsOf(what)...)
			out.Episodes = append(out.Episodes, cognition.EpisodeDraft{
				Summary: limit("The user works "+strings.ToLower(m[1])+" "+what+".", 500), Topics: topicsOf(what), Importance: 0.7})
		}
		switch {
		case noviceRE.MatchString(msg):
			out.Profile.Expertise = cognition.Novice
		case expertRE.MatchString(msg):
			out.Profile.Expertise = cognition.Expert
		}
	}
	if len(prefs) > 0 {
		out.Profile.Preferences = prefs
	}
	if len(out.Profile.Interests) > cognition.MaxInterests {
		out.Profile.Interests = out.Profile.Interests[:cognition.MaxInterests]
	}
	if len(out.Episodes) > 5 {
		out.Episodes = out.Episodes[:5]
	}
	if m := outcomeRE.FindStringSubmatch(turn); m != nil && m[1] == string(cognition.Failure) && len(said) > 0 {
		if t := topicsOf(said[len(said)-1]); len(t) > 0 {
			out.Gaps = []string{limit(strings.Join(t[:min(3, len(t))], " "), 60)}
		}
	}
	return out
}

// styleOf maps a stated preference to a communication style.
func styleOf(pref string) cognition.Style {
	w := tokens(pref)
	switch {
	case hasAny(w, "short", "brief", "concise", "terse", "shorter"):
		return cognition.Concise
	case hasAny(w, "detailed", "long", "thorough", "longer", "detail"):
		return cognition.Detailed
	case hasAny(w, "technical", "code", "precise"):
		return cognition.Technical
	}
	return ""
}

// topicsOf returns the content words of s, lower-case, at most
// cognition.MaxTopics.
func topicsOf(s string) []string {
	var out []string
	for _, w := range contentWords(s) {
		if len(w) > 1 && len(w) <= 60 && len(out) < cognition.MaxTopics {
			out = append(out, w)
		}
	}
	return out
}

func capitalize(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}

// limit cuts s to at most n bytes, at a rune boundary.
func limit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	for len(string(r)) > n {
		r = r[:len(r)-1]
	}
	return string(r)
}

// asksAboutUser reports whether the question asks what the assistant
// knows about the user ("What is my name?", "What do you know about me?").
func asksAboutUser(w []string) bool {
	asks := hasAny(w, "what", "what's", "whats", "know", "remember", "who")
	return asks && (hasAny(w, "my") && hasAny(w, "name", "preferences", "preference") ||
		hasAny(w, "me") && hasAny(w, "about") && hasAny(w, "know", "remember") ||
		hasAny(w, "who") && hasAny(w, "am") && hasAny(w, "i"))
}

// aboutUser answers a question about the user from the "User profile:"
// lines of the conversation context (a cognitive context).
func aboutUser(w []string, conversation string) string {
	var facts []string
	name := ""
	in := false
	for _, line := range strings.Split(conversation, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "User profile:":
			in = true
		case !in:
		case strings.HasPrefix(line, "- "):
			fact := strings.TrimPrefix(line, "- ")
			if v, ok := strings.CutPrefix(fact, "Prefers name: "); ok {
				name = v
				continue
			}
			facts = append(facts, fact)
		default:
			in = false
		}
	}
	switch {
	case name == "" && len(facts) == 0:
		return "I don't know anything about you yet. Tell me (your name, how you like your answers) and, if I can remember users, I will."
	case hasAny(w, "name") && name != "":
		return "Your name is " + name + "."
	}
	s := "Here is what I remember about you:"
	if name != "" {
		s += " your name is " + name + "."
	}
	if len(facts) > 0 {
		s += " " + strings.Join(facts, "; ") + "."
	}
	return s
}

// saysAboutSelf reports whether q tells the assistant about the user
// (their name, a preference, their work) rather than asking something.
func saysAboutSelf(q string) bool {
	return !strings.Contains(q, "?") && (nameRE.MatchString(q) || preferRE.MatchString(q) || workRE.MatchString(q))
}

// acknowledge answers a user telling about themselves.
func acknowledge(q string) string {
	s := "Thanks for telling me."
	if m := nameRE.FindStringSubmatch(q); m != nil {
		s = "Nice to meet you, " + capitalize(m[1]) + "!"
	}
	if m := preferRE.FindStringSubmatch(q); m != nil && styleOf(m[1]) == cognition.Concise {
		s += " I'll keep my answers short."
	}
	return s + " What would you like to know?"
}
