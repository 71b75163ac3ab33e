package swarm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/supervisor"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/mcp"
)

// Node names of an agent's subgraph: the seed's execution loop.
const (
	Retrieve = "retrieve" // Voyager: past successful executions of similar tasks
	Execute  = "execute"  // the model picks a tool call; the MCP server runs it
	Reflect  = "reflect"  // tri-state reflection: APPROVED, FIXED or REJECTED
	Fix      = "fix"      // FIXED: the reviewer's output replaces the agent's
	Save     = "save"     // the result for the supervisor, and the skill
)

// buildAgent compiles one agent's subgraph, bound to its MCP server alone.
func (w *Swarm) buildAgent(name string) (*graph.Compiled[AgentState], error) {
	a := &mcpAgent{w: w, name: name, server: w.servers[name]}
	g := graph.New[AgentState]()
	g.AddNode(Retrieve, a.retrieve)
	g.AddNode(Execute, a.execute)
	g.AddNode(Reflect, a.reflect)
	g.AddNode(Fix, a.fix)
	g.AddNode(Save, a.save)
	g.AddEdge(graph.START, Retrieve)
	g.AddEdge(Retrieve, Execute)
	g.AddEdge(Execute, Reflect)
	g.AddConditionalEdges(Reflect, a.route, Execute, Fix, Save)
	g.Label(Reflect, Execute, string(supervisor.VerdictRejected))
	g.Label(Reflect, Fix, string(supervisor.VerdictFixed))
	g.Label(Reflect, Save, string(supervisor.VerdictApproved))
	g.AddEdge(Fix, Save)
	g.AddEdge(Save, graph.END)
	c, err := g.Compile(graph.WithLogger(w.log))
	if err != nil {
		return nil, fmt.Errorf("swarm: agent %s: %w", name, err)
	}
	return c, nil
}

// agentInput gives the agent its step and the context it may see: the
// blackboard's keys and the last five results, not the whole history.
func (w *Swarm) agentInput(name string) func(State) AgentState {
	return func(s State) AgentState {
		in := AgentState{Step: Step{ID: "?", Agent: name, Status: StepPending}}
		if st := readyStep(s.Plan, name); st != nil {
			in.Step = *st
		}
		var b strings.Builder
		keys := make([]string, 0, len(s.Blackboard))
		for k := range s.Blackboard {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 0 {
			fmt.Fprintf(&b, "Available artifacts: %s\n", strings.Join(keys, ", "))
		}
		for _, r := range s.Results[max(0, len(s.Results)-5):] {
			if r.OK {
				fmt.Fprintf(&b, "%s (%s): %s\n", r.Step, r.Agent, clip(r.Output, 200))
			} else {
				fmt.Fprintf(&b, "%s (%s) failed: %s\n", r.Step, r.Agent, clip(r.Error, 200))
			}
		}
		in.Context = b.String()
		return in
	}
}

// agentOutput hands the agent's result back to the supervisor.
func agentOutput(a AgentState) graph.Update[State] {
	u := graph.Updates(resultsF.Set([]Result{a.Final}), usageF.Set(a.Usage))
	if a.Final.OK {
		u = graph.Updates(u, blackboardF.Set(map[string]string{a.Final.Step + ".output": a.Final.Output}))
	}
	return u
}

type mcpAgent struct {
	w            *Swarm
	name, server string
}

func (a *mcpAgent) emit(ctx context.Context, s AgentState, e Event) error {
	e.Agent, e.Step = a.name, s.Step.ID
	return graph.Emit(ctx, e)
}

// retrieve finds past successful executions of similar tasks.
func (a *mcpAgent) retrieve(ctx context.Context, s AgentState) (graph.Update[AgentState], error) {
	skills, err := a.w.skills.Find(ctx, a.name, s.Step.Task, a.w.cfg.SkillLimit)
	if err != nil {
		if ctx.Err() != nil {
			return graph.Update[AgentState]{}, ctx.Err()
		}
		a.w.log.Warn("swarm: skill retrieval failed; going on without", zap.String("agent", a.name), zap.Error(err))
		return graph.Update[AgentState]{}, nil
	}
	if len(skills) > 0 {
		if err := a.emit(ctx, s, Event{Kind: EventSkills, Skills: skills}); err != nil {
			return graph.Update[AgentState]{}, err
		}
	}
	return aSkillsF.Set(skills), nil
}

// card is the agent's own server and tools.
func (a *mcpAgent) card(ctx context.Context) AgentCard {
	for _, c := range a.w.cards(ctx) {
		if c.Name == a.name {
			return c
		}
	}
	return AgentCard{Name: a.name, Server: a.server}
}

// execute asks the model for a tool call and makes it.
func (a *mcpAgent) execute(ctx context.Context, s AgentState) (graph.Update[AgentState], error) {
	card := a.card(ctx)
	attempt := s.Attempts + 1
	u := aAttemptsF.Set(attempt)
	res, err := agent.Call[Choice](ctx, a.w.client, agentPrompt(card, s, a.w.cfg.MaxAttempts), a.w.opts(AgentSystem)...)
	u = graph.Updates(u, aUsageF.Set(res.Usage))
	var soe *agent.StructuredOutputError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return graph.Update[AgentState]{}, ctx.Err()
	case errors.As(err, &soe):
		return a.executed(ctx, s, u, attempt, "", nil, "", "the model gave no valid tool call: "+err.Error())
	default:
		return graph.Update[AgentState]{}, err
	}
	choice := res.Value
	if !slices.ContainsFunc(card.Tools, func(t ToolCard) bool { return t.Name == choice.Tool }) {
		var names []string
		for _, t := range card.Tools {
			names = append(names, t.Name)
		}
		msg := fmt.Sprintf("tool %q is not one of this agent's tools (%s)", choice.Tool, strings.Join(names, ", "))
		if len(names) == 0 {
			msg = fmt.Sprintf("the %s MCP server lists no tools; it may be down", a.server)
		}
		return a.executed(ctx, s, u, attempt, choice.Tool, choice.Arguments, "", msg)
	}
	session := a.w.manager.NewSession(mcp.Callbacks{})
	defer session.Close()
	out, err := session.CallTool(ctx, mcp.ToolCall{Server: a.server, Name: choice.Tool, Arguments: choice.Arguments})
	switch {
	case err != nil && ctx.Err() != nil:
		return graph.Update[AgentState]{}, ctx.Err()
	case err != nil:
		return a.executed(ctx, s, u, attempt, choice.Tool, choice.Arguments, "", err.Error())
	case out.Status != mcp.StatusSuccess:
		return a.executed(ctx, s, u, attempt, choice.Tool, choice.Arguments, "", out.Error)
	}
	var text []string
	for _, c := range out.TextContents() {
		text = append(text, c.Text)
	}
	return a.executed(ctx, s, u, attempt, choice.Tool, choice.Arguments, strings.Join(text, "\n"), "")
}

func (a *mcpAgent) executed(ctx context.Context, s AgentState, u graph.Update[AgentState], attempt int,
	tool string, args map[string]any, output, toolErr string) (graph.Update[AgentState], error) {
	if err := a.emit(ctx, s, Event{Kind: EventExecute, Attempt: attempt, Tool: tool, Arguments: args, Text: output, Error: toolErr}); err != nil {
		return graph.Update[AgentState]{}, err
	}
	return graph.Updates(u, aToolF.Set(tool), aArgsF.Set(args), aOutputF.Set(output), aToolErrF.Set(toolErr)), nil
}

// reflect is the tri-state reflection: a separate model call
// (supervisor.Critique) critiques the output. A failed call is never approved,
// and with no valid verdict the tool's status decides (supervisor.FallbackReview).
func (a *mcpAgent) reflect(ctx context.Context, s AgentState) (graph.Update[AgentState], error) {
	in := supervisor.CritiqueInput{Task: s.Step.Task, Output: s.Output, Error: s.ToolErr,
		Attempt: s.Attempts, MaxAttempts: a.w.cfg.MaxAttempts}
	if s.Tool != "" {
		in.Call = s.Tool + " " + mustJSON(s.Arguments)
	}
	res, err := supervisor.Critique(ctx, a.w.client, in, a.w.opts("")...)
	if err != nil {
		if ctx.Err() != nil {
			return graph.Update[AgentState]{}, ctx.Err()
		}
		return graph.Update[AgentState]{}, err
	}
	r, usage := res.Value, res.Usage
	if res.Fallback {
		a.w.log.Warn("swarm: no valid reflection; judged by the tool's status", zap.String("agent", a.name),
			zap.String("verdict", string(r.Verdict)))
	}
	if err := a.emit(ctx, s, Event{Kind: EventReview, Attempt: s.Attempts, Review: &r, Fallback: res.Fallback}); err != nil {
		return graph.Update[AgentState]{}, err
	}
	u := graph.Updates(aReviewsF.Set([]supervisor.Review{r}), aUsageF.Set(usage))
	if r.Verdict == supervisor.VerdictRejected {
		u = graph.Updates(u, aFeedbackF.Set(r.Feedback))
	}
	return u, nil
}

// route follows the verdict: REJECTED retries while attempts remain.
func (a *mcpAgent) route(_ context.Context, s AgentState) (graph.Route, error) {
	switch s.Reviews[len(s.Reviews)-1].Verdict {
	case supervisor.VerdictFixed:
		return graph.To(Fix), nil
	case supervisor.VerdictRejected:
		if s.Attempts < a.w.cfg.MaxAttempts {
			return graph.To(Execute), nil
		}
	}
	return graph.To(Save), nil
}

// fix takes the reviewer's corrected output.
func (a *mcpAgent) fix(_ context.Context, s AgentState) (graph.Update[AgentState], error) {
	return aOutputF.Set(s.Reviews[len(s.Reviews)-1].FixedOutput), nil
}

// save builds the result and, for a success, saves the skill.
func (a *mcpAgent) save(ctx context.Context, s AgentState) (graph.Update[AgentState], error) {
	last := s.Reviews[len(s.Reviews)-1]
	r := Result{Step: s.Step.ID, Agent: a.name, Task: s.Step.Task, Tool: s.Tool, Arguments: s.Arguments,
		Output: s.Output, OK: last.Verdict != supervisor.VerdictRejected, Attempts: s.Attempts, Reviews: s.Reviews}
	for _, sk := range s.Skills {
		r.Skills = append(r.Skills, sk.Task)
	}
	if !r.OK {
		r.Error = fmt.Sprintf("rejected after %d attempt(s): %s", s.Attempts, strings.TrimPrefix(last.Feedback, "The step failed: "))
	} else {
		var lessons []string
		for _, rv := range s.Reviews {
			if rv.Verdict == supervisor.VerdictRejected {
				lessons = append(lessons, rv.Feedback)
			}
		}
		skill := Skill{Agent: a.name, Task: s.Step.Task, Tool: s.Tool, Arguments: s.Arguments, Lesson: strings.Join(lessons, " ")}
		if err := a.w.skills.Save(ctx, skill); err != nil {
			if ctx.Err() != nil {
				return graph.Update[AgentState]{}, ctx.Err()
			}
			a.w.log.Warn("swarm: saving a skill failed", zap.String("agent", a.name), zap.Error(err))
		}
	}
	if err := a.emit(ctx, s, Event{Kind: EventResult, Attempt: s.Attempts, Result: &r}); err != nil {
		return graph.Update[AgentState]{}, err
	}
	return aFinalF.Set(r), nil
}
