package memory

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
)

// MaxRecent is the largest N conversation.recent(N) accepts.
const MaxRecent = 10000

type querySource struct{}

func (querySource) Check(req Requirement) error {
	if req.Method != "" {
		return errors.New(`the query source takes no method; write "query"`)
	}
	return nil
}

func (querySource) Fetch(_ context.Context, turn *Turn, _ Requirement) (Part, error) {
	p := Part{Priority: PriorityPinned}
	if turn.Query != "" {
		p.Items = []Item{{Text: turn.Query}}
	}
	return p, nil
}

// ConversationSource returns the source behind conversation.summary and
// conversation.recent(N), for an [Assembler] built without
// AssemblerConfig.Conversations. recent without an argument means the
// window size. The summary part holds the summary followed by the messages
// that left the window but are not summarized yet ([View.Pending]), so that
// nothing said in the conversation drops out of the context while the
// summarizer catches up.
func ConversationSource(c *Conversations) Source { return conversationSource{c} }

type conversationSource struct{ c *Conversations }

func (conversationSource) Check(req Requirement) error {
	switch req.Method {
	case "summary":
		if req.HasArg {
			return errors.New(`conversation.summary takes no argument; write "conversation.summary"`)
		}
		return nil
	case "recent":
		_, err := recentArg(req)
		return err
	}
	return fmt.Errorf(`the conversation source has no method %q; use conversation.summary or conversation.recent(N)`, req.Method)
}

func recentArg(req Requirement) (int, error) {
	if !req.HasArg {
		return 0, nil
	}
	n, err := strconv.Atoi(req.Arg)
	if err != nil || n < 1 || n > MaxRecent {
		return 0, fmt.Errorf("conversation.recent takes a message count from 1 to %d, e.g. conversation.recent(5); got %q", MaxRecent, req.Arg)
	}
	return n, nil
}

func (s conversationSource) Fetch(ctx context.Context, turn *Turn, req Requirement) (Part, error) {
	if turn.ConversationID == "" {
		return Part{}, errors.New("the turn has no ConversationID; create it with memory.NewTurn(conversationID, query)")
	}
	if req.Method == "summary" {
		v, err := s.c.View(ctx, turn.ConversationID)
		if err != nil {
			return Part{}, err
		}
		p := Part{Priority: PriorityHistory, Items: make([]Item, 0, 1+len(v.Pending))}
		if v.Summary.Text != "" {
			p.Items = append(p.Items, Item{Text: v.Summary.Text})
		}
		for _, m := range v.Pending {
			p.Items = append(p.Items, Item{Text: m.String()})
		}
		return p, nil
	}
	n, err := recentArg(req)
	if err != nil {
		return Part{}, err
	}
	if n == 0 {
		n = s.c.Window()
	}
	msgs, err := s.c.Recent(ctx, turn.ConversationID, n)
	if err != nil {
		return Part{}, err
	}
	p := Part{Priority: PriorityRecent, Items: make([]Item, len(msgs))}
	for i, m := range msgs {
		p.Items[i].Text = m.String()
	}
	return p, nil
}

type resultSource struct{}

func (resultSource) Check(req Requirement) error {
	switch {
	case req.Method == "all" && !req.HasArg:
		return nil
	case req.Method == "step" && req.HasArg:
		return nil
	}
	return fmt.Errorf(`the results source serves results.all and results.step(ID); got %q`, req.String())
}

func (resultSource) Fetch(_ context.Context, turn *Turn, req Requirement) (Part, error) {
	if req.Method == "step" {
		r, ok := turn.Results.Get(req.Arg)
		if !ok {
			have := turn.Results.IDs()
			list := "none yet"
			if len(have) > 0 {
				list = strings.Join(have, ", ")
			}
			return Part{}, fmt.Errorf("%w: no result with id %q this turn (results so far: %s)", ErrNotFound, req.Arg, list)
		}
		return Part{Priority: PriorityRequested, Items: []Item{{Text: r.Text()}}}, nil
	}
	all := turn.Results.All()
	p := Part{Priority: PriorityTurn, Items: make([]Item, len(all))}
	for i, r := range all {
		label := r.ID
		if r.Name != "" {
			label += " (" + r.Name + ")"
		}
		p.Items[i].Text = label + ": " + r.Text()
	}
	return p, nil
}

type actionSource struct{}

func (actionSource) Check(req Requirement) error {
	if req.Method == "this_turn" && !req.HasArg {
		return nil
	}
	return fmt.Errorf(`the actions source serves actions.this_turn; got %q`, req.String())
}

func (actionSource) Fetch(_ context.Context, turn *Turn, _ Requirement) (Part, error) {
	all := turn.Actions.All()
	p := Part{Priority: PriorityTurn, Items: make([]Item, len(all))}
	for i, a := range all {
		p.Items[i].Text = a.String()
	}
	return p, nil
}

// Tools is the tool catalogue behind tools.summaries and tools.schema(NAME).
// The caller supplies it (the unified tool provider, an MCP server
// registry); implementations are safe for concurrent use.
type Tools interface {
	// ToolSummaries lists every tool with its short description.
	ToolSummaries(ctx context.Context) ([]model.ToolSummary, error)
	// ToolSchema returns the full input schema of the named tool as text
	// for a prompt (usually JSON). An unknown tool is an error matching
	// [ErrNotFound].
	ToolSchema(ctx context.Context, name string) (string, error)
}

// ToolSource returns the source behind tools.summaries and
// tools.schema(NAME) over t; register it under "tools" (or let
// AssemblerConfig.Tools do it).
func ToolSource(t Tools) Source { return toolSource{t} }

type toolSource struct{ t Tools }

func (toolSource) Check(req Requirement) error {
	switch {
	case req.Method == "summaries" && !req.HasArg:
		return nil
	case req.Method == "schema" && req.HasArg:
		return nil
	}
	return fmt.Errorf(`the tools source serves tools.summaries and tools.schema(NAME); got %q`, req.String())
}

func (s toolSource) Fetch(ctx context.Context, _ *Turn, req Requirement) (Part, error) {
	if req.Method == "schema" {
		schema, err := s.t.ToolSchema(ctx, req.Arg)
		if err != nil {
			return Part{}, err
		}
		return Part{Priority: PriorityRequested, Items: []Item{{Text: schema}}}, nil
	}
	sums, err := s.t.ToolSummaries(ctx)
	if err != nil {
		return Part{}, err
	}
	p := Part{Priority: PriorityCatalog, Items: make([]Item, len(sums))}
	for i, t := range sums {
		p.Items[i].Text = "- " + t.Name + ": " + t.Description
	}
	return p, nil
}
