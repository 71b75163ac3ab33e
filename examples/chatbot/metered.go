package chatbot

import (
	"context"
	"iter"
	"sync"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
)

// A turn's token usage has one path: every model call the turn makes (the
// supervisor's steps, the operators it calls as tools, its workflows'
// steps, query rewriting, synthesis) goes through meteredModel, which adds
// the call's usage to the turn's meter; the node that made the calls moves
// what the meter holds into State.Usage (fUsage, which sums), the one home
// of a turn's usage. No node adds a step's own usage report: each call is
// counted once, where it happens.

// meteredModel is the model of a turn's calls: it adds each call's usage to
// the meter of the turn it runs in.
type meteredModel struct{ c *agent.Client }

// turnModel is the model the supervisor's steps call.
func (b *Bot) turnModel() model.Model { return meteredModel{b.client} }

func (m meteredModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	resp, err := m.c.Generate(ctx, req)
	if resp != nil {
		meterOf(ctx, resp.Usage)
	}
	return resp, err
}

// Stream yields the call's chunks and meters the usage its ChunkDone chunk
// reports. A provider reports usage only there, so when the consumer stops
// early (yield returns false) the rest of the reply is read without being
// yielded, up to ChunkDone or the stream's error, and its usage counted: the
// tokens were generated and billed whether or not the consumer read them.
// The drain ends when ctx ends, as the call does.
func (m meteredModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		stopped := false
		for c, err := range m.c.Stream(ctx, req) {
			if c.Kind == model.ChunkDone && c.Response != nil {
				meterOf(ctx, c.Response.Usage)
			}
			if stopped {
				if err != nil || c.Kind == model.ChunkDone {
					return
				}
				continue
			}
			if !yield(c, err) {
				stopped = true
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
