package chatbot

import (
	"context"
	"sync"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentgraph/agentgraph/agent"
)

// meteredModel is the model operators call: it adds each call's usage to
// the turn it runs in, so a turn's token usage counts its operators
// (query rewriting, synthesis) and its workflows' steps too.
type meteredModel struct{ c *agent.Client }

func (m meteredModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	resp, err := m.c.GenerateContent(ctx, msgs, opts...)
	if resp != nil {
		if r, ok := ctx.Value(runKey{}).(*turnDeps); ok {
			r.meter.add(agent.UsageOf(resp))
		}
	}
	return resp, err
}

func (m meteredModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// meter sums usage reported from several goroutines (parallel steps).
type meter struct {
	mu    sync.Mutex
	usage agent.TokenUsage
}

func (m *meter) add(u agent.TokenUsage) {
	m.mu.Lock()
	m.usage = m.usage.Merge(u)
	m.mu.Unlock()
}

// take returns the usage summed since the last take.
func (m *meter) take() agent.TokenUsage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.usage
	m.usage = agent.TokenUsage{}
	return u
}
