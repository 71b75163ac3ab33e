package chatbot_test

import (
	"context"
	"iter"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/memory"
)

// countingModel sums the usage of every response m returns.
type countingModel struct {
	m         model.Model
	mu        sync.Mutex
	calls     int
	summaries int // conversation summaries (memory.LLMSummarizer's calls)
	usage     model.Usage
}

func (c *countingModel) add(u model.Usage) {
	c.mu.Lock()
	c.calls++
	c.usage.InputTokens += u.InputTokens
	c.usage.OutputTokens += u.OutputTokens
	c.mu.Unlock()
}

// snapshot returns the calls, summaries and usage counted so far.
func (c *countingModel) snapshot() (calls, summaries int, usage model.Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.summaries, c.usage
}

func (c *countingModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	resp, err := c.m.Generate(ctx, req)
	if resp != nil {
		c.add(resp.Usage)
		if len(req.Messages) > 0 && req.Messages[0].Text() == memory.DefaultSummaryInstructions {
			c.mu.Lock()
			c.summaries++
			c.mu.Unlock()
		}
	}
	return resp, err
}

func (c *countingModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for ch, err := range c.m.Stream(ctx, req) {
			if ch.Kind == model.ChunkDone && ch.Response != nil {
				c.add(ch.Response.Usage)
			}
			if !yield(ch, err) {
				return
			}
		}
	}
}

// TestTurnUsageCountsEveryCallOnce: a turn's token.usage is the sum of the
// usage of every model call the turn made (the supervisor's decisions and
// reflection, the workflow's steps and operators, the answer), each counted
// once.
func TestTurnUsageCountsEveryCallOnce(t *testing.T) {
	for _, msg := range []string{
		"Hello!",                             // decide (the answer is the decision's)
		"What is 15% of 240?",                // decide, tool, reflect, write
		"Compare our pricing to competitors", // decide, workflow, synthesis, write
	} {
		t.Run(msg, func(t *testing.T) {
			counting := &countingModel{m: offline.New(offline.Config{})}
			_, srv := serve(t, chatbot.Config{DataDir: t.TempDir(), Model: counting}, 5*time.Second)
			usage := turnUsage(t, chat(t, srv, "", msg))
			counting.mu.Lock()
			defer counting.mu.Unlock()
			if counting.calls == 0 {
				t.Fatalf("token.usage %+v after no model call", usage)
			}
			if usage.InputTokens != counting.usage.InputTokens || usage.OutputTokens != counting.usage.OutputTokens {
				t.Errorf("token.usage in %d out %d; the turn's %d model calls used in %d out %d",
					usage.InputTokens, usage.OutputTokens, counting.calls, counting.usage.InputTokens, counting.usage.OutputTokens)
			}
		})
	}
}

// turnUsage returns the one token.usage event of a turn.
func turnUsage(t *testing.T, tr turn) chatevent.TokenUsage {
	t.Helper()
	var usage *chatevent.TokenUsage
	for _, ev := range tr.events {
		if p, ok := ev.Payload.(chatevent.TokenUsage); ok {
			if usage != nil {
				t.Fatalf("two token.usage events in one turn")
			}
			usage = &p
		}
	}
	if usage == nil {
		t.Fatalf("no token.usage event; events %v", tr.types())
	}
	return *usage
}

// TestConversationSummaryUsageCountedOnce: the conversation summary a
// turn's answer triggers (messages leaving the window) is a model call of
// that turn: its usage is in the turn's token.usage, once, and not in the
// bot's background usage.
func TestConversationSummaryUsageCountedOnce(t *testing.T) {
	counting := &countingModel{m: offline.New(offline.Config{})}
	bot, srv := serve(t, chatbot.Config{DataDir: t.TempDir(), Model: counting, Window: 2}, 5*time.Second)
	chat(t, srv, "conv-sum", "Hello!")
	calls0, sums0, before := counting.snapshot()
	if sums0 != 0 {
		t.Fatalf("%d summaries after the first turn; the window holds its two messages", sums0)
	}
	usage := turnUsage(t, chat(t, srv, "conv-sum", "Hello again!"))
	calls, sums, after := counting.snapshot()
	if sums != 1 {
		t.Fatalf("%d summaries in the second turn, want 1 (Window 2, four messages)", sums)
	}
	in, out := after.InputTokens-before.InputTokens, after.OutputTokens-before.OutputTokens
	if usage.InputTokens != in || usage.OutputTokens != out {
		t.Errorf("token.usage in %d out %d; the turn's %d model calls, the summary among them, used in %d out %d",
			usage.InputTokens, usage.OutputTokens, calls-calls0, in, out)
	}
	if bg := bot.BackgroundUsage(); bg.Total() != 0 {
		t.Errorf("background usage %+v; the summary was the turn's", bg)
	}
}

// TestDocumentSummaryUsageIsBackground: a document processed outside any
// turn is summarised by the model; its usage is the bot's background
// usage, every call once.
func TestDocumentSummaryUsageIsBackground(t *testing.T) {
	counting := &countingModel{m: offline.New(offline.Config{})}
	bot, srv := serve(t, chatbot.Config{DataDir: t.TempDir(), Model: counting}, 5*time.Second)
	code, doc, _ := upload(t, srv, map[string]any{"conversation_id": "conv-doc", "name": "office.md", "content": parrot})
	if code != http.StatusAccepted {
		t.Fatalf("upload: %d %v", code, doc)
	}
	id, _ := doc["id"].(string)
	if d := waitReady(t, srv, "conv-doc", id); d.Status != "ready" {
		t.Fatalf("document %+v", d)
	}
	calls, _, usage := counting.snapshot()
	bg := bot.BackgroundUsage()
	if calls == 0 || bg.InputTokens != usage.InputTokens || bg.OutputTokens != usage.OutputTokens {
		t.Errorf("background usage in %d out %d; the %d model calls of the document's processing used in %d out %d",
			bg.InputTokens, bg.OutputTokens, calls, usage.InputTokens, usage.OutputTokens)
	}
}
