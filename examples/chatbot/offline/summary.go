package offline

import (
	"fmt"
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
