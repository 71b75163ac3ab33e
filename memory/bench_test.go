package memory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"

	"github.com/agentgraph/agentgraph/memory"
)

// newBenchAssembler returns an assembler over a 50-message conversation
// (window 5, the rest summarized), a 20-tool catalogue and a turn with 4
// results and 4 actions.
func newBenchAssembler(b *testing.B, budget int) (*memory.Assembler, *memory.Turn) {
	b.Helper()
	ctx := context.Background()
	conv, err := memory.NewConversations(memory.ConversationConfig{
		Store: memory.NewInMemoryStore(),
		Summarizer: memory.SummarizerFunc(func(_ context.Context, prev string, dropped []memory.Message) (string, error) {
			return prev + strings.Repeat("The user discussed pricing. ", len(dropped)), nil
		}),
	})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		msg := memory.Message{Role: role, Content: fmt.Sprintf("Message %d about our pricing, competitors and the plan for next quarter.", i+1)}
		if err := conv.Append(ctx, "c", msg); err != nil {
			b.Fatal(err)
		}
	}
	cat := &catalog{schemas: map[string]string{"web_search": `{"type":"object","properties":{"query":{"type":"string"}}}`}}
	for i := range 20 {
		cat.tools = append(cat.tools, model.ToolSummary{Name: fmt.Sprint("tool_", i), Description: "Does one useful thing with a short description."})
	}
	turn := memory.NewTurn("c", "Compare our pricing to competitors")
	for i := range 4 {
		turn.Results.Put(memory.Result{ID: fmt.Sprint("step_", i+1), Name: "Search", Output: map[string]any{"hits": i, "top": "a result"}})
		turn.Actions.Finish(turn.Actions.Begin("call_tool", fmt.Sprint("tool_", i), ""), nil)
	}
	return memory.NewAssembler(memory.AssemblerConfig{Conversations: conv, Tools: cat, Budget: budget}), turn
}

var supervisorRequirements = []string{
	"query", "conversation.recent(5)", "conversation.summary", "tools.summaries", "actions.this_turn", "results.all",
}

// BenchmarkAssemble50 assembles a supervisor's context (query, the recent
// window, the summary, 20 tool summaries, actions and results) over a
// 50-message conversation, within the default budget.
func BenchmarkAssemble50(b *testing.B) {
	asm, turn := newBenchAssembler(b, 0)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := asm.Assemble(ctx, turn, supervisorRequirements...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssemble50Trimmed asks for all 50 messages under a 600-token
// budget, so most of the conversation is trimmed.
func BenchmarkAssemble50Trimmed(b *testing.B) {
	asm, turn := newBenchAssembler(b, 600)
	ctx := context.Background()
	reqs := append([]string{"conversation.recent(50)"}, supervisorRequirements...)
	b.ReportAllocs()
	for b.Loop() {
		c, err := asm.Assemble(ctx, turn, reqs...)
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Trimmed) == 0 {
			b.Fatal("nothing trimmed")
		}
	}
}

// BenchmarkAssemble50Render includes rendering the context as prompt text.
func BenchmarkAssemble50Render(b *testing.B) {
	asm, turn := newBenchAssembler(b, 0)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c, err := asm.Assemble(ctx, turn, supervisorRequirements...)
		if err != nil {
			b.Fatal(err)
		}
		_ = c.String()
	}
}
