package offline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/memory"
)

// TestConversationSummary folds messages through package memory's
// LLMSummarizer: the summary says what the user asked and what the reply
// said, keeps the previous summary, and is never a "no information"
// answer.
func TestConversationSummary(t *testing.T) {
	s := &memory.LLMSummarizer{Model: offline.New(offline.Config{})}
	got, err := s.Summarize(context.Background(), "", []memory.Message{
		{Role: memory.RoleUser, Content: "How much does the Team plan cost?"},
		{Role: memory.RoleAssistant, Content: "Here is what I found:\n\n- \"Team costs $49 per editor per month.\" (search_knowledge: pricing § Team)"},
		{Role: memory.RoleUser, Content: "What is 2 plus 2?"},
		{Role: memory.RoleAssistant, Content: "2 + 2 = 4."},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Team plan cost", "$49", "2 plus 2", "= 4"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q: %s", want, got)
		}
	}
	if strings.Contains(got, "no information") {
		t.Errorf("summary is a non-answer: %s", got)
	}
	next, err := s.Summarize(context.Background(), got, []memory.Message{{Role: memory.RoleUser, Content: "Is there a free trial?"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(next, got) || !strings.Contains(next, "free trial") {
		t.Errorf("updated summary %q does not keep %q and add the new question", next, got)
	}
}
