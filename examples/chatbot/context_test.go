package chatbot_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
)

// TestOperatorGetsConversationContext sends a follow-up whose pronoun only
// the first exchange explains. The supervisor hands it to query_rewriter,
// whose tool call gets its assembled context (the query and
// conversation.recent(3)) from the tool subflow's context node; the rewrite
// names the Business plan, the knowledge search uses it, and the answer
// quotes the Business plan's facts.
func TestOperatorGetsConversationContext(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	first := chat(t, srv, "conv-ctx", "How much does the Business plan cost?")
	if !strings.Contains(first.answer(), "$89") {
		t.Fatalf("first answer lacks $89:\n%s", first.answer())
	}
	second := chat(t, srv, "conv-ctx", "Is it billed annually?")
	// The synthesizer combines the two observations; its assembled
	// context (results.all) holds the rewriter's JSON, which it must not
	// quote as the answer.
	if diff := cmp.Diff([]string{"query_rewriter", "search_knowledge", "synthesizer"}, second.tools()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	for _, ev := range second.events {
		if p, ok := ev.Payload.(chatevent.ToolError); ok {
			t.Errorf("tool error: %+v", p)
		}
	}
	answer := second.answer()
	for _, want := range []string{"billed annually", "Business costs $89"} {
		if !strings.Contains(answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, answer)
		}
	}
	if strings.Contains(answer, "internal_query") {
		t.Errorf("the answer quotes the query rewrite:\n%s", answer)
	}
}

// An operator whose ContextRequirements name a source the assembler does
// not have stops New with an error naming the operator and the
// requirement, instead of failing each call.
func TestUnknownContextSourceFailsAtStartup(t *testing.T) {
	_, err := chatbot.New(context.Background(), chatbot.Config{Offline: true, DataDir: t.TempDir(),
		RegisterOperators: func(r *operator.Registry) error {
			return r.Register(operator.Metadata{Name: "calendar_reader", Description: "Reads the user's calendar", Type: operator.PureLLM,
				ContextRequirements: []string{"query", "calendar.recent"}},
				func(operator.Deps) (operator.Operator, error) {
					return operator.Func(func(context.Context, *operator.Context) (*operator.Result, error) { return &operator.Result{}, nil }), nil
				})
		}})
	if err == nil {
		t.Fatal("New accepted an operator that needs an unknown context source")
	}
	for _, want := range []string{"operator calendar_reader", `"calendar.recent"`, "unknown context source", "conversation"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if !errors.Is(err, memory.ErrUnknownSource) {
		t.Errorf("error %v does not match memory.ErrUnknownSource", err)
	}
}

// TestOperatorPromptHoldsConversation runs the bot on a scripted model
// over OpenAI's wire protocol: in the second turn the supervisor calls
// query_rewriter, and the prompt the rewriter's model receives holds the
// first exchange, assembled from conversation.recent(3).
func TestOperatorPromptHoldsConversation(t *testing.T) {
	model := llmtest.New(
		llmtest.JSON(supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "known", Response: "The Business plan costs $89 per editor per month."}),
		llmtest.JSON(supervisor.Decision{Action: supervisor.ActionCallTool, Reasoning: "resolve it", Tool: "query_rewriter", Arguments: map[string]any{"query": "Is it billed annually?"}}),
		llmtest.Text(`{"internal_query": "business plan annual billing", "external_query": "acme business plan annual billing"}`),
		llmtest.JSON(supervisor.Reflection{Assessment: supervisor.AssessSatisfied, Reasoning: "rewritten"}),
		llmtest.Text("Yes, billed annually."),
	)
	_, srv := scriptedServer(t, model)
	chat(t, srv, "conv-prompt", "How much does the Business plan cost?")
	second := chat(t, srv, "conv-prompt", "Is it billed annually?")
	if diff := cmp.Diff([]string{"query_rewriter"}, second.tools()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	calls := model.Calls()
	if len(calls) != 5 {
		t.Fatalf("%d model calls, want 5", len(calls))
	}
	prompt := calls[2].Prompt
	for _, want := range []string{
		"Question: Is it billed annually?",
		"## query\nIs it billed annually?\n",
		"## conversation.recent(3)\nuser: How much does the Business plan cost?\nassistant: The Business plan costs $89 per editor per month.\n",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the rewriter's prompt lacks %q:\n%s", want, prompt)
		}
	}
}

// The writer's thinking, streamed over the wire as its own chunks, stays
// out of the answer the user reads: only its answer text becomes
// response.chunk events.
func TestWriterThinkingNotStreamed(t *testing.T) {
	model := llmtest.New(
		llmtest.JSON(supervisor.Decision{Action: supervisor.ActionCallTool, Reasoning: "resolve it", Tool: "query_rewriter", Arguments: map[string]any{"query": "Is the Business plan billed annually?"}}),
		llmtest.Text(`{"internal_query": "business plan annual billing", "external_query": "acme business plan annual billing"}`),
		llmtest.JSON(supervisor.Reflection{Assessment: supervisor.AssessSatisfied, Reasoning: "rewritten"}),
		llmtest.Reply{Thinking: "The rewriter found the billing terms.", Text: "Yes, billed annually."},
	)
	_, srv := scriptedServer(t, model)
	tr := chat(t, srv, "conv-thinking", "Is the Business plan billed annually?")
	if got := tr.answer(); got != "Yes, billed annually." {
		t.Errorf("answer %q, want the writer's text alone, without its thinking", got)
	}
}
