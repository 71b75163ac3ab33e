package bosai

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/graph"
)

// ComposerSystem is the composer's system prompt.
const ComposerSystem = "You are Bos-AI's composer. Answer the question from the agents' results only, in a few sentences of plain text. Quote figures exactly and name the agent each comes from. If an agent failed, say what is missing and that the answer is partial."

// composePrompt renders the composer's prompt: the question, the
// planner's rationale and every result, failed ones included.
func composePrompt(s State) string {
	var b strings.Builder
	b.WriteString(MarkerCompose + "\n\nCompose the final answer from the agents' results.\n\n")
	b.WriteString("## Question\n" + s.Request.Question + "\n\n## Rationale\n" + s.Plan.Rationale + "\n\n## Results\n")
	for _, r := range s.Results {
		fmt.Fprintf(&b, "### %s (%s)\n", r.Agent, r.Status)
		switch r.Status {
		case StatusSucceeded:
			b.WriteString(r.Answer + "\n")
		case StatusSkipped:
			b.WriteString("skipped: beyond max_turns\n")
		default:
			b.WriteString("error: " + r.Error.Message + "\n")
		}
		if r.Table != nil {
			fmt.Fprintf(&b, "table: %d rows, columns %s\n", r.Table.RowCount, strings.Join(r.Table.Columns, ", "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// composeNode runs once all agents reported. It picks the first table of a
// successful agent, asks the model for the answer and, if the model fails,
// answers with the agents' results as they are (a partial response).
func (b *Bot) composeNode(ctx context.Context, s State) (graph.Update[State], error) {
	if s.Pending != 0 {
		return graph.Update[State]{}, fmt.Errorf("bosai: compose ran with %d agents still pending", s.Pending)
	}
	rec := &recorder{agent: AgentComposer}
	results := s.Results
	for _, a := range s.Plan.Skipped {
		results = append(results, AgentResult{Agent: a, Status: StatusSkipped})
	}
	s.Results = results
	resp := Response{Plan: s.Plan, Results: results}
	for _, r := range s.Results {
		if r.Status == StatusFailed {
			resp.Partial = true
		} else if resp.Data == nil && r.Table != nil {
			resp.Data = r.Table
		}
	}
	out, err := agent.Complete(ctx, b.client, composePrompt(s), agent.WithSystem(cmp.Or(s.Request.SystemPrompt, ComposerSystem)))
	if ctx.Err() != nil {
		return graph.Update[State]{}, ctx.Err()
	}
	if err == nil && strings.TrimSpace(out.Text) != "" {
		resp.Answer = strings.TrimSpace(out.Text)
	} else {
		if err == nil {
			err = fmt.Errorf("the model returned an empty answer")
		}
		rec.add(ctx, TraceError, "composer model failed; answering with the agents' results", map[string]any{"error": err.Error()})
		resp.Answer = listResults(s.Results)
		resp.Partial = true
	}
	agents := make([]string, len(s.Results))
	for i, r := range s.Results {
		agents[i] = string(r.Agent)
	}
	rec.add(ctx, TraceResult, "composer wrote the answer", map[string]any{"agents": agents, "partial": resp.Partial, "confidence": s.Plan.Confidence})
	if s.Request.Trace {
		resp.Trace = append(append([]TraceEvent(nil), s.Trace...), rec.events...)
	}
	if s.Request.IncludeData != nil && !*s.Request.IncludeData {
		resp.Data = nil
		resp.Results = make([]AgentResult, len(results))
		for i, r := range results {
			r.Table = nil
			resp.Results[i] = r
		}
	}
	return graph.Updates(fResponse.Set(resp), fTrace.Set(rec.events)), nil
}

// listResults is the answer without a composer model: each result as it is.
func listResults(results []AgentResult) string {
	if len(results) == 0 {
		return "No agent ran, so there is no answer."
	}
	var lines []string
	for _, r := range results {
		switch r.Status {
		case StatusSucceeded:
			lines = append(lines, fmt.Sprintf("%s: %s", r.Agent, r.Answer))
		case StatusSkipped:
			lines = append(lines, fmt.Sprintf("%s skipped (max_turns)", r.Agent))
		default:
			lines = append(lines, fmt.Sprintf("%s failed: %s", r.Agent, r.Error.Message))
		}
	}
	return strings.Join(lines, "\n")
}
