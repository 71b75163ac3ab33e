package chatbot

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/tool"
)

// Node names of the tool subflow, which runs as the chat graph's tool
// node.
const (
	NodeToolPrepare = "prepare"
	NodeToolExecute = "execute"
	NodeToolCollect = "collect"
)

// ToolState is the state of the tool subflow: one call of the tool the
// supervisor chose.
type ToolState struct {
	// Query is the user's message.
	Query string
	// Tool and Arguments are the supervisor's call.
	Tool      string
	Arguments map[string]any
	// Source says what serves the tool: local, operator or mcp.
	Source tool.Source
	// Schema is the tool's input schema, loaded when it is selected.
	Schema string
	// Prior are the turn's observations before this call.
	Prior []agent.Observation
	// Observation is the call's result.
	Observation agent.Observation
	// Usage counts the model calls of an operator run as the tool.
	Usage agent.TokenUsage
}

var (
	ftSource      = graph.Replace(func(s *ToolState) *tool.Source { return &s.Source })
	ftSchema      = graph.Replace(func(s *ToolState) *string { return &s.Schema })
	ftObservation = graph.Replace(func(s *ToolState) *agent.Observation { return &s.Observation })
	ftUsage       = graph.Declare(func(s *ToolState) *agent.TokenUsage { return &s.Usage })
)

// buildToolFlow compiles prepare → execute → collect. prepare finds the
// tool and loads its full schema only now that it is selected (the
// supervisor saw one-line summaries); an unknown tool goes straight to
// collect with an observation that lists what exists, so the supervisor can
// correct itself. execute runs it through the provider with the request's
// MCP session; collect trims the result for the prompts.
func buildToolFlow(b *Bot) (*graph.Compiled[ToolState], error) {
	g := graph.New[ToolState]()
	g.AddNode(NodeToolPrepare, b.prepareTool)
	g.AddNode(NodeToolExecute, b.executeTool)
	g.AddNode(NodeToolCollect, collectTool)
	g.AddEdge(graph.START, NodeToolPrepare)
	g.AddConditionalEdges(NodeToolPrepare, func(_ context.Context, s ToolState) (graph.Route, error) {
		if s.Observation.Err != "" {
			return graph.To(NodeToolCollect), nil
		}
		return graph.To(NodeToolExecute), nil
	}, NodeToolExecute, NodeToolCollect)
	g.AddEdge(NodeToolExecute, NodeToolCollect)
	g.AddEdge(NodeToolCollect, graph.END)
	g.Label(NodeToolPrepare, NodeToolExecute, "found").Label(NodeToolPrepare, NodeToolCollect, "unknown tool")
	return g.Compile(graph.WithLogger(b.log))
}

func (b *Bot) prepareTool(ctx context.Context, s ToolState) (graph.Update[ToolState], error) {
	src, err := b.provider.Lookup(ctx, s.Tool)
	if err != nil {
		if ctx.Err() != nil {
			return graph.Update[ToolState]{}, ctx.Err()
		}
		var names []string
		if sums, lerr := b.provider.Summaries(ctx); lerr == nil {
			for _, t := range sums {
				names = append(names, t.Name)
			}
		}
		return graph.Updates(ftObservation.Set(agent.Observation{Source: s.Tool,
			Err: fmt.Sprintf("%v; the tools are: %v", err, names)})), nil
	}
	schema, err := b.provider.ToolSchema(ctx, s.Tool)
	if err != nil && !errors.Is(err, context.Canceled) {
		// The call can still go ahead: the server checks the arguments.
		b.log.Debug("chatbot: no schema for the selected tool")
	}
	return graph.Updates(ftSource.Set(src), ftSchema.Set(schema)), nil
}

func (b *Bot) executeTool(ctx context.Context, s ToolState) (graph.Update[ToolState], error) {
	r := runFrom(ctx)
	res, err := b.provider.Execute(ctx, s.Tool, s.Arguments, tool.Env{
		Query: s.Query, Session: r.caller, Emitter: r.em, Elicitor: r.elicit, Turn: r.turn,
	})
	obs := agent.Observation{Source: s.Tool}
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
	return graph.Updates(ftObservation.Set(obs), ftUsage.Set(r.meter.take())), nil
}

func collectTool(_ context.Context, s ToolState) (graph.Update[ToolState], error) {
	o := s.Observation
	o.Content = truncate(o.Content, maxObservation)
	return graph.Updates(ftObservation.Set(o)), nil
}
