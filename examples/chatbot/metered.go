package chatbot

import (
	"context"
	"iter"
	"sync"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
)

// meteredModel is the model operators call: it adds each call's usage to
// the turn it runs in, so a turn's token usage counts its operators
// (query rewriting, synthesis) and its workflows' steps too.
type meteredModel struct{ c *agent.Client }

func (m meteredModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	resp, err := m.c.Generate(ctx, req)
	if resp != nil {
		meterOf(ctx, resp.Usage)
	}
	return resp, err
}

func (m meteredModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for c, err := range m.c.Stream(ctx, req) {
			if c.Kind == model.ChunkDone && c.Response != nil {
				meterOf(ctx, c.Response.Usage)
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

// meterOf adds usage to the turn ctx belongs to, if any.
func meterOf(ctx context.Context, u agent.TokenUsage) {
	if r, ok := ctx.Value(runKey{}).(*turnDeps); ok {
		r.meter.add(u)
	}
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
