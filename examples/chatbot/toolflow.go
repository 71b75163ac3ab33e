package chatbot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
)

// Node names of the tool subflow, which runs as the chat graph's tool
// node.
const (
	NodeToolPrepare = "prepare"
	NodeToolContext = "context"
	NodeToolExecute = "execute"
	NodeToolCollect = "collect"
)

// ToolState is the state of the tool subflow: one call of the tool the
// supervisor chose.
type ToolState struct {
	// ConversationID names the conversation, for the context of a turn
	// run outside Bot.Chat.
	ConversationID string
	// Query is the user's message.
	Query string
	// Tool and Arguments are the supervisor's call.
	Tool      string
	Arguments map[string]any
	// Source says what serves the tool: local, operator or mcp.
	Source operator.Source
	// Schema is the tool's input schema, loaded when it is selected.
	Schema string
	// Context is the focused context of an operator, assembled from its
	// Metadata.ContextRequirements by the context node; nil for local and
	// MCP tools, and for operators that require nothing.
	Context *memory.Assembled
	// Prior are the turn's observations before this call.
	Prior []supervisor.Observation
	// Observation is the call's result.
	Observation supervisor.Observation
	// Usage counts the model calls of an operator run as the tool.
	Usage model.Usage
	// Direct is what the tool sent the user as a direct response (see
	// toolresult.Result.Direct), when it answered the user itself: the
	// turn's answer, so the writer writes none.
	Direct *string
}

var (
	ftSource      = graph.Replace(func(s *ToolState) *operator.Source { return &s.Source })
	ftSchema      = graph.Replace(func(s *ToolState) *string { return &s.Schema })
	ftContext     = graph.Replace(func(s *ToolState) **memory.Assembled { return &s.Context })
	ftObservation = graph.Replace(func(s *ToolState) *supervisor.Observation { return &s.Observation })
	ftUsage       = graph.Declare(func(s *ToolState) *model.Usage { return &s.Usage })
	ftDirect      = graph.Replace(func(s *ToolState) **string { return &s.Direct })
)

// buildToolFlow compiles prepare → context → execute → collect. prepare
// finds the tool and loads its full schema only now that it is selected
// (the supervisor saw one-line summaries); an unknown tool goes straight to
// collect with an observation that lists what exists, so the supervisor can
// correct itself. context assembles the focused context an operator's
// ContextRequirements ask for (the conversation, the turn's results, tool
// schemas), once, for execute to hand over; local and MCP tools need none.
// A context that cannot be assembled goes to collect as the call's error.
// execute runs the tool through the provider with the request's MCP
// session and records it in the turn's actions; collect trims the result
// for the prompts and stores it in the turn's results (results.all,
// results.step(call_N)) for the operators that come after it.
func buildToolFlow(b *Bot) (*graph.Compiled[ToolState], error) {
	g := graph.New[ToolState]()
	g.AddNode(NodeToolPrepare, b.prepareTool)
	g.AddNode(NodeToolContext, b.buildToolContext)
	g.AddNode(NodeToolExecute, b.executeTool)
	g.AddNode(NodeToolCollect, b.collectTool)
	g.AddEdge(graph.START, NodeToolPrepare)
	g.AddConditionalEdges(NodeToolPrepare, unlessFailed(NodeToolContext), NodeToolContext, NodeToolCollect)
	g.AddConditionalEdges(NodeToolContext, unlessFailed(NodeToolExecute), NodeToolExecute, NodeToolCollect)
	g.AddEdge(NodeToolExecute, NodeToolCollect)
	g.AddEdge(NodeToolCollect, graph.END)
	g.Label(NodeToolPrepare, NodeToolContext, "found").Label(NodeToolPrepare, NodeToolCollect, "unknown tool").
		Label(NodeToolContext, NodeToolExecute, "ready").Label(NodeToolContext, NodeToolCollect, "context failed")
	return g.Compile(graph.WithLogger(b.log))
}

func (b *Bot) prepareTool(ctx context.Context, s ToolState) (graph.Update[ToolState], error) {
	src, err := b.provider.Lookup(ctx, s.Tool)
	if err != nil {
		if ctx.Err() != nil {
			return graph.Update[ToolState]{}, ctx.Err()
		}
		var names []string
		if sums, lerr := b.provider.ToolSummaries(ctx); lerr == nil {
			for _, t := range sums {
				names = append(names, t.Name)
			}
		}
		return graph.Updates(ftObservation.Set(supervisor.Observation{Source: s.Tool,
			Err: fmt.Sprintf("%v; the tools are: %v", err, names)})), nil
	}
	schema, err := b.provider.ToolSchema(ctx, s.Tool)
	if err != nil && !errors.Is(err, context.Canceled) {
		// The call can still go ahead: the server checks the arguments.
		b.log.Debug("chatbot: no schema for the selected tool")
	}
	return graph.Updates(ftSource.Set(src), ftSchema.Set(schema)), nil
}

// unlessFailed routes to next, or to collect once the call has failed.
func unlessFailed(next string) graph.RouterFunc[ToolState] {
	return func(_ context.Context, s ToolState) (graph.Route, error) {
		if s.Observation.Err != "" {
			return graph.To(NodeToolCollect), nil
		}
		return graph.To(next), nil
	}
}

// buildToolContext assembles the selected operator's context for this
// turn: its query, conversation and results so far.
func (b *Bot) buildToolContext(ctx context.Context, s ToolState) (graph.Update[ToolState], error) {
	if s.Source != operator.SourceOperator {
		return graph.Update[ToolState]{}, nil
	}
	a, err := b.provider.Assemble(ctx, s.Tool, s.Arguments, operator.Env{Query: s.Query, Turn: turnOf(ctx, s)})
	switch {
	case err != nil && ctx.Err() != nil:
		return graph.Update[ToolState]{}, ctx.Err()
	case err != nil:
		// The call fails before it runs: the client sees it start and
		// fail, as it would see a failure of the operator itself.
		r := runFrom(ctx).report
		_ = r.Report(ctx, operator.ToolStart{Tool: s.Tool, Source: s.Source, Args: s.Arguments})
		_ = r.Report(ctx, operator.ToolFailed{Tool: s.Tool, Err: err})
		return graph.Updates(ftObservation.Set(supervisor.Observation{Source: s.Tool, Err: err.Error()})), nil
	}
	return graph.Updates(ftContext.Set(a)), nil
}

// turnOf returns the request's turn, or, for a run started outside
// Bot.Chat, a turn of the state's conversation and query.
func turnOf(ctx context.Context, s ToolState) *memory.Turn {
	if t := runFrom(ctx).turn; t != nil {
		return t
	}
	return memory.NewTurn(s.ConversationID, s.Query)
}

func (b *Bot) executeTool(ctx context.Context, s ToolState) (graph.Update[ToolState], error) {
	r := runFrom(ctx)
	turn := turnOf(ctx, s)
	action := turn.Actions.Begin(ToolActionKind, s.Tool, string(s.Source))
	sent := &directText{next: r.report}
	res, err := b.provider.Execute(ctx, s.Tool, s.Arguments, operator.Env{
		Query: s.Query, Tools: r.caller, Reporter: sent, Elicitor: r.elicit, Turn: turn, Assembled: s.Context,
	})
	if err == nil && res.IsError {
		_ = turn.Actions.Finish(action, errors.New(res.Error))
	} else {
		_ = turn.Actions.Finish(action, err)
	}
	obs := supervisor.Observation{Source: s.Tool}
	switch {
	case err != nil && ctx.Err() != nil:
		return graph.Update[ToolState]{}, ctx.Err()
	case err != nil:
		obs.Err = err.Error()
	case res.IsError:
		obs.Err, obs.Content = res.Error, res.Text()
	default:
		obs.Content = res.Text()
	}
	usage := r.meter.take() // once: take resets the meter
	u := graph.Updates(ftObservation.Set(obs), ftUsage.Set(usage))
	if err == nil && res.Direct {
		text := cmp.Or(sent.text(), obs.Content)
		u = graph.Updates(ftObservation.Set(obs), ftUsage.Set(usage), ftDirect.Set(&text))
	}
	return u, nil
}

// directText passes a tool's reports on and keeps the text of the direct
// response among them (direct.response, or the chunks of a streamed
// one), up to maxObservation bytes: what the user was sent, to store as
// the turn's answer.
type directText struct {
	next operator.Reporter
	mu   sync.Mutex
	b    strings.Builder
}

// Report keeps the text of a direct response and passes r on.
func (d *directText) Report(ctx context.Context, r operator.Report) error {
	var s string
	switch r := r.(type) {
	case operator.DirectResponse:
		s = r.Text
	case operator.DirectResponseChunk:
		s = r.Text
	}
	if s != "" {
		d.mu.Lock()
		if room := maxObservation - d.b.Len(); room > 0 {
			d.b.WriteString(truncate(s, room))
		}
		d.mu.Unlock()
	}
	if d.next == nil {
		return nil
	}
	return d.next.Report(ctx, r)
}

func (d *directText) text() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.b.String()
}

// ToolActionKind is the kind of the action a tool call records in the
// turn (actions.this_turn): the tool is its name, its source the detail.
const ToolActionKind = "tool_call"

// collectTool trims the call's observation for the prompts and stores it
// in the turn's results as call_N, N counting the turn's observations.
func (b *Bot) collectTool(ctx context.Context, s ToolState) (graph.Update[ToolState], error) {
	o := s.Observation
	o.Content = truncate(o.Content, maxObservation)
	res := memory.Result{ID: fmt.Sprintf("call_%d", len(s.Prior)+1), Name: s.Tool, Output: o.Content}
	if o.Err != "" {
		res.Err = errors.New(o.Err)
	}
	if err := turnOf(ctx, s).Results.Put(res); err != nil {
		b.log.Warn("chatbot: recording a tool result in the turn failed", zap.String("tool", s.Tool), zap.Error(err))
	}
	return graph.Updates(ftObservation.Set(o)), nil
}
