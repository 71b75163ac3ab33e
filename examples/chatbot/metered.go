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
// counted once, where it happens. The conversation summary a turn's answer
// triggers is one of the turn's calls: respond takes its usage into the
// turn's.
//
// Calls made outside any turn (document summaries, profile learning) go
// through the same model and add to the bot's background meter
// (Bot.BackgroundUsage), so that no model call goes uncounted.

// meteredModel is the model of every call the bot makes: it adds each
// call's usage to the meter of the turn it runs in, or to bg outside a turn.
type meteredModel struct {
	c  *agent.Client
	bg *meter // usage of the calls made outside a turn; nil counts none
}

// turnModel is the model the bot's calls go through (see meteredModel).
func (b *Bot) turnModel() model.Model { return meteredModel{b.client, &b.background} }

// BackgroundUsage returns the tokens of the model calls the bot made
// outside any turn since it started: document summaries and the learning
// of user profiles. A turn's own calls, the conversation summary its answer
// triggers among them, are in that turn's token.usage event instead.
func (b *Bot) BackgroundUsage() model.Usage { return b.background.total() }

func (m meteredModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	resp, err := m.c.Generate(ctx, req)
	if resp != nil {
		m.meter(ctx, resp.Usage)
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
				m.meter(ctx, c.Response.Usage)
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

// meter adds usage to the turn ctx belongs to, or to bg outside a turn.
func (m meteredModel) meter(ctx context.Context, u model.Usage) {
	if r, ok := ctx.Value(runKey{}).(*turnDeps); ok {
		r.meter.add(u)
	} else if m.bg != nil {
		m.bg.add(u)
	}
}

// meter sums usage reported from several goroutines (parallel steps).
type meter struct {
	mu    sync.Mutex
	usage model.Usage
}

func (m *meter) add(u model.Usage) {
	m.mu.Lock()
	m.usage = m.usage.Merge(u)
	m.mu.Unlock()
}

// total returns the usage summed since the last take.
func (m *meter) total() model.Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.usage
}

// take returns the usage summed since the last take.
func (m *meter) take() model.Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.usage
	m.usage = model.Usage{}
	return u
}
