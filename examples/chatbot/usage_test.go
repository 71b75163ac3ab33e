package chatbot_test

import (
	"context"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
)

// countingModel sums the usage of every response m returns.
type countingModel struct {
	m     model.Model
	mu    sync.Mutex
	calls int
	usage model.Usage
}

func (c *countingModel) add(u model.Usage) {
	c.mu.Lock()
	c.calls++
	c.usage.InputTokens += u.InputTokens
	c.usage.OutputTokens += u.OutputTokens
	c.mu.Unlock()
}

func (c *countingModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	resp, err := c.m.Generate(ctx, req)
	if resp != nil {
		c.add(resp.Usage)
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
			tr := chat(t, srv, "", msg)
			var usage *chatevent.TokenUsage
			for _, ev := range tr.events {
				if p, ok := ev.Payload.(chatevent.TokenUsage); ok {
					if usage != nil {
						t.Fatalf("two token.usage events in one turn")
					}
					usage = &p
				}
			}
			counting.mu.Lock()
			defer counting.mu.Unlock()
			if usage == nil || counting.calls == 0 {
				t.Fatalf("token.usage %+v after %d model calls", usage, counting.calls)
			}
			if usage.InputTokens != counting.usage.InputTokens || usage.OutputTokens != counting.usage.OutputTokens {
				t.Errorf("token.usage in %d out %d; the turn's %d model calls used in %d out %d",
					usage.InputTokens, usage.OutputTokens, counting.calls, counting.usage.InputTokens, counting.usage.OutputTokens)
			}
		})
	}
}
