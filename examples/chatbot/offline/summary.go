package offline

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentgraph/agentgraph/memory"
)

// isConversationSummary reports whether a request is package memory's
// LLMSummarizer folding a conversation's older messages into its summary.
func isConversationSummary(system string) bool {
	return strings.Contains(system, memory.DefaultSummaryInstructions)
}

// summarizeConversation writes the updated running summary from the
// LLMSummarizer's prompt ("Current summary:", "New messages:" with one
// "role: text" message each, continuation lines included): the current
// summary, then for each exchange what the user asked or said and the
// first sentence of the reply. It says only what the messages say.
func summarizeConversation(human string) string {
	cur, rest, _ := strings.Cut(human, "New messages:")
	previous := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(cur), "Current summary:"))
	if previous == "(none yet)" {
		previous = ""
	}
	rest, _, _ = strings.Cut(rest, "\nUpdated summary:")
	type msg struct{ role, text string }
	var msgs []msg
	for _, line := range strings.Split(rest, "\n") {
		role, text, ok := strings.Cut(line, ": ")
		if ok && (role == string(memory.RoleUser) || role == string(memory.RoleAssistant)) {
			msgs = append(msgs, msg{role, text})
			continue
		}
		if n := len(msgs); n > 0 && strings.TrimSpace(line) != "" {
			msgs[n-1].text += " " + strings.TrimSpace(line)
		}
	}
	var parts []string
	if previous != "" {
		parts = append(parts, previous)
	}
	for _, m := range msgs {
		text := strings.Join(strings.Fields(m.text), " ")
		if text == "" {
			continue
		}
		switch m.role {
		case string(memory.RoleUser):
			parts = append(parts, fmt.Sprintf("The user asked: %q.", truncate(text, 200)))
		default:
			parts = append(parts, "The assistant replied: "+firstSentence(text))
		}
	}
	if len(parts) == 0 {
		return "No messages yet."
	}
	return strings.Join(parts, " ")
}

// firstSentence returns a reply's first sentence, at most 200 bytes; a
// list of quotes is summarised as such.
func firstSentence(text string) string {
	text = strings.TrimPrefix(text, "Here is what I found: ")
	if i := sentenceEndRE.FindStringIndex(text); i != nil {
		text = text[:i[0]+1]
	}
	return truncate(strings.TrimSpace(text), 200)
}

// summaryLinePrefix starts the conversation's line that holds the summary
// of its earlier messages, as the chatbot writes it.
const summaryLinePrefix = "Summary of earlier messages: "

// summaryTurnRE is one exchange of a summary summarizeConversation wrote:
// `The user asked: "..."` and `The assistant replied: ...`.
var summaryTurnRE = regexp.MustCompile(`The user asked: ("(?:[^"\\]|\\.)*")\.|The assistant replied: `)

// withSummaryTurns returns a conversation with the exchanges of a summary
// summarizeConversation wrote ("Summary of earlier messages: The user
// asked: \"...\". The assistant replied: ...") written back as "user:"
// and "assistant:" lines, in their place: the rules that look for an
// earlier question (a correction, a follow-up, "what did I ask first?")
// then find one that left the window of recent messages. A summary in
// other words is kept as it is.
func withSummaryTurns(conversation string) string {
	if !strings.Contains(conversation, "The user asked: ") {
		return conversation // most conversations: nothing summarised this way
	}
	lines := strings.Split(conversation, "\n")
	var out []string
	for _, line := range lines {
		// Only the summary's own line is read: a message's continuation
		// line, or a reply that quotes "The user asked: ...", is kept.
		t, ok := strings.CutPrefix(strings.TrimSpace(line), summaryLinePrefix)
		if !ok || !strings.Contains(t, "The user asked: ") {
			out = append(out, line)
			continue
		}
		t = strings.TrimSpace(t)
		ms := summaryTurnRE.FindAllStringSubmatchIndex(t, -1)
		if len(ms) == 0 {
			out = append(out, line)
			continue
		}
		if lead := strings.TrimSpace(t[:ms[0][0]]); lead != "" {
			out = append(out, lead) // what the summary said before the exchanges
		}
		for i, m := range ms {
			if m[2] >= 0 {
				if q, err := strconv.Unquote(t[m[2]:m[3]]); err == nil {
					out = append(out, "user: "+q)
				}
				continue
			}
			end := len(t)
			if i+1 < len(ms) {
				end = ms[i+1][0]
			}
			if reply := strings.TrimSpace(t[m[1]:end]); reply != "" {
				out = append(out, "assistant: "+reply)
			}
		}
	}
	return strings.Join(out, "\n")
}
