package swarm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/mcptool"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// Node names of an agent's subgraph: the seed's execution loop.
const (
	Retrieve = "retrieve" // Voyager: past successful executions of similar tasks
	Execute  = "execute"  // the model picks a tool call, or answers itself (LLM-only step)
	Call     = "call"     // the MCP server runs the tool call
	Reflect  = "reflect"  // tri-state reflection: APPROVED, FIXED or REJECTED
	Fix      = "fix"      // FIXED: the reviewer's output replaces the agent's
	Save     = "save"     // the result for the supervisor, and the skill
)

// buildAgent compiles one agent's subgraph, bound to its MCP server alone.
// With a saver the subgraph checkpoints its own steps: a run resumed after
// a crash goes on inside the agent where it stopped, so a tool call whose
// result was saved (the call node's step) is not made again.
func (w *Swarm) buildAgent(a *mcpAgent, saver checkpoint.Saver) (*graph.Compiled[AgentState], error) {
	g := graph.New[AgentState]()
	g.AddNode(Retrieve, a.retrieve)
	g.AddNode(Execute, a.execute)
	g.AddNode(Call, a.call)
	g.AddNode(Reflect, a.reflect)
	g.AddNode(Fix, a.fix)
	g.AddNode(Save, a.save)
	g.AddEdge(graph.START, Retrieve)
	g.AddEdge(Retrieve, Execute)
	g.AddConditionalEdges(Execute, func(_ context.Context, s AgentState) (graph.Route, error) {
		if s.Tool != "" && s.ToolErr == "" && s.Output == "" {
			return graph.To(Call), nil
		}
		return graph.To(Reflect), nil
	}, Call, Reflect)
	g.Label(Execute, Call, "tool")
	g.Label(Execute, Reflect, "answer")
	g.AddEdge(Call, Reflect)
	g.AddConditionalEdges(Reflect, a.route, Execute, Fix, Save)
	g.Label(Reflect, Execute, string(supervisor.VerdictRejected))
	g.Label(Reflect, Fix, string(supervisor.VerdictFixed))
	g.Label(Reflect, Save, string(supervisor.VerdictApproved))
	g.AddEdge(Fix, Save)
	g.AddEdge(Save, graph.END)
	opts := []graph.CompileOption{graph.WithLogger(w.log)}
	if saver != nil {
		opts = append(opts, graph.WithCheckpointer(saver))
	}
	c, err := g.Compile(opts...)
	if err != nil {
		return nil, fmt.Errorf("swarm: agent %s: %w", a.name, err)
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
		in.Context = agentContext(s)
		return in
	}
}

// agentContext is what an agent may see of the run (the seed's blindness
// fix): the blackboard's keys and the last five messages.
func agentContext(s State) string {
	{
		var b strings.Builder
		keys := make([]string, 0, len(s.Blackboard))
		for k := range s.Blackboard {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 0 {
			fmt.Fprintf(&b, "Available artifacts: %s\n", strings.Join(keys, ", "))
		}
		for _, m := range s.Messages[max(0, len(s.Messages)-5):] {
			who := string(m.Role)
			if m.Name != "" {
				who = m.Name
			}
			fmt.Fprintf(&b, "%s: %s\n", who, clip(m.Text(), 400))
		}
		return b.String()
	}
}

// agentOutput hands the agent's result back to the supervisor: the result,
// its message, its citations, the agent's trace and, for a success, its
// output on the blackboard.
func agentOutput(a AgentState) graph.Update[State] {
	r := a.Final
	text := r.Step + ": " + r.Output
	if !r.OK {
		text = r.Step + " failed: " + r.Error
	}
	msg := model.Assistant(text)
	msg.Name = r.Agent
	u := graph.Updates(resultsF.Set([]Result{r}), usageF.Set(a.Usage), messagesF.Set(model.Messages{msg}),
		traceF.Set(a.Trace))
	if r.OK {
		u = graph.Updates(u, blackboardF.Set(map[string]string{r.Step + ".output": r.Output}),
			citationsF.Set(r.Citations))
	}
	return u
}

// mcpAgent is one agent of a team: bound to one MCP server, or to none
// (it answers from the model), or a whole team run as one node, or the
// Architect.
type mcpAgent struct {
	w            *Swarm
	name, server string
	description  string
	team         *team  // a sub-swarm run as this node
	owner        string // the team's TeamSpec.Owner
	architect    bool   // the Architect: designs, registers and runs teams
}

func (a *mcpAgent) emit(ctx context.Context, s AgentState, e Event) error {
	e.Agent, e.Step = a.name, s.Step.ID
	return graph.Emit(ctx, e)
}

// offered reports whether the run in ctx may use the agent: a team only
// by its owner's runs (TeamSpec.Owner), any other agent by every run.
func (a *mcpAgent) offered(ctx context.Context) bool {
	return a.team == nil || a.owner == principalOf(ctx)
}

// principalOf returns the principal the run in ctx belongs to: the part of
// its thread id before the first "." (the HTTP API names a task's thread
// principal.id, and a team's sub-run extends that id), or "" for a thread
// without one, such as a library or CLI run's.
func principalOf(ctx context.Context) string {
	return ownerOf(graph.ConfigFrom(ctx).ThreadID)
}

// ownerOf returns the principal a task's thread id names, "" if none.
func ownerOf(thread string) string {
	p, _, ok := strings.Cut(thread, ".")
	if !ok || !principalRe.MatchString(p) {
		return ""
	}
	return p
}

// retrieve finds past successful executions of similar tasks.
func (a *mcpAgent) retrieve(ctx context.Context, s AgentState) (graph.Update[AgentState], error) {
	skills, err := a.w.skills.Find(ctx, principalOf(ctx), a.name, s.Step.Task, a.w.cfg.SkillLimit)
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
	return (&team{w: a.w, agents: []*mcpAgent{a}}).cards(ctx)[0]
}

// execute asks the model for a tool call, or, when no tool fits, for the
// step's output itself (the LLM-only path).
func (a *mcpAgent) execute(ctx context.Context, s AgentState) (graph.Update[AgentState], error) {
	card := a.card(ctx)
	attempt := s.Attempts + 1
	u := graph.Updates(aAttemptsF.Set(attempt), aCitesF.Set(nil))
	res, err := agent.Call[Choice](ctx, a.w.client, agentPrompt(card, s, a.w.cfg.MaxAttempts), a.w.opts(AgentSystem)...)
	u = graph.Updates(u, aUsageF.Set(res.Usage))
	var soe *agent.StructuredOutputError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return graph.Update[AgentState]{}, ctx.Err()
	case errors.As(err, &soe):
		return a.executed(ctx, s, u, attempt, Choice{}, "", "the model gave no valid tool call: "+err.Error())
	default:
		return graph.Update[AgentState]{}, &ModelError{Node: a.name + "/" + Execute, Err: err}
	}
	choice := res.Value
	if choice.Tool == "" {
		u = graph.Updates(u, aTraceF.Set([]TraceEntry{{Kind: TraceThought, Node: a.name, Step: s.Step.ID, Text: choice.Thought},
			{Kind: TraceAnswer, Node: a.name, Step: s.Step.ID, Text: choice.Answer}}))
		return a.executed(ctx, s, u, attempt, choice, choice.Answer, "")
	}
	u = graph.Updates(u, aTraceF.Set([]TraceEntry{{Kind: TraceThought, Node: a.name, Step: s.Step.ID, Text: choice.Thought}}))
	if !slices.ContainsFunc(card.Tools, func(t model.ToolDef) bool { return t.Name == choice.Tool }) {
		var names []string
		for _, t := range card.Tools {
			names = append(names, t.Name)
		}
		msg := fmt.Sprintf("tool %q is not one of this agent's tools (%s)", choice.Tool, strings.Join(names, ", "))
		switch {
		case a.server == "":
			msg = "this agent has no tools; write the step's output in answer"
		case len(names) == 0:
			msg = fmt.Sprintf("the %s MCP server lists no tools; it may be down", a.server)
		}
		return a.executed(ctx, s, u, attempt, choice, "", msg)
	}
	return graph.Updates(u, aThoughtF.Set(choice.Thought), aToolF.Set(choice.Tool), aArgsF.Set(choice.Arguments),
		aOutputF.Set(""), aToolErrF.Set("")), nil
}

// call makes the tool call execute chose. It is a step of its own so that
// its result is checkpointed before reflection runs: a run resumed after a
// crash does not make a call whose result was saved again.
func (a *mcpAgent) call(ctx context.Context, s AgentState) (graph.Update[AgentState], error) {
	choice := Choice{Thought: s.Thought, Tool: s.Tool, Arguments: s.Arguments}
	u := aTraceF.Set([]TraceEntry{{Kind: TraceToolCall, Node: a.name, Step: s.Step.ID, Text: a.server + "." + s.Tool + " " + mustJSON(s.Arguments)}})
	session := a.w.manager.NewSession(mcp.Callbacks{})
	defer session.Close()
	out, err := callTool(ctx, a.w.registry, session, a.server, s.Tool, s.Arguments)
	switch {
	case err != nil && ctx.Err() != nil:
		return graph.Update[AgentState]{}, ctx.Err()
	case err != nil:
		return a.executed(ctx, s, u, s.Attempts, choice, "", err.Error())
	case out.IsError:
		return a.executed(ctx, s, u, s.Attempts, choice, "", out.Error)
	}
	output := out.Text()
	u = graph.Updates(u, aCitesF.Set(citations(a.server, s.Tool, s.Arguments, output)))
	return a.executed(ctx, s, u, s.Attempts, choice, output, "")
}

// callTool calls server's tool name through session with args as its JSON
// arguments (mcptool: the operator layer's view of an MCP tool).
func callTool(ctx context.Context, reg *mcp.Registry, session *mcp.Session, server, name string, args map[string]any) (*toolresult.Result, error) {
	tool, err := mcptool.New(ctx, reg, session, name, mcptool.WithServer(server))
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("arguments of %s: %w", name, err)
	}
	return tool.CallResult(ctx, raw)
}

func (a *mcpAgent) executed(ctx context.Context, s AgentState, u graph.Update[AgentState], attempt int,
	choice Choice, output, toolErr string) (graph.Update[AgentState], error) {
	if err := a.emit(ctx, s, Event{Kind: EventExecute, Attempt: attempt, Thought: choice.Thought, Tool: choice.Tool,
		Arguments: choice.Arguments, Text: output, Error: toolErr}); err != nil {
		return graph.Update[AgentState]{}, err
	}
	if choice.Tool != "" {
		text := output
		if toolErr != "" {
			text = "error: " + toolErr
		}
		u = graph.Updates(u, aTraceF.Set([]TraceEntry{{Kind: TraceToolOutput, Node: a.name, Step: s.Step.ID, Text: text}}))
	}
	return graph.Updates(u, aThoughtF.Set(choice.Thought), aToolF.Set(choice.Tool), aArgsF.Set(choice.Arguments),
		aOutputF.Set(output), aToolErrF.Set(toolErr)), nil
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
		return graph.Update[AgentState]{}, &ModelError{Node: a.name + "/" + Reflect, Err: err}
	}
	r, usage := res.Value, res.Usage
	if res.Fallback {
		a.w.log.Warn("swarm: no valid reflection; judged by the tool's status", zap.String("agent", a.name),
			zap.String("verdict", string(r.Verdict)))
	}
	if err := a.emit(ctx, s, Event{Kind: EventReview, Attempt: s.Attempts, Review: &r, Fallback: res.Fallback}); err != nil {
		return graph.Update[AgentState]{}, err
	}
	text := string(r.Verdict) + ": " + r.Critique
	if r.Feedback != "" {
		text += " Feedback: " + r.Feedback
	}
	u := graph.Updates(aReviewsF.Set([]supervisor.Review{r}), aUsageF.Set(usage),
		aTraceF.Set([]TraceEntry{{Kind: TraceReflection, Node: a.name, Step: s.Step.ID, Text: text}}))
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
	fixed := s.Reviews[len(s.Reviews)-1].FixedOutput
	// Keep the citations of the sources the fixed output still quotes.
	var kept []Citation
	for _, c := range s.Citations {
		if strings.Contains(fixed, c.Source) && (c.Locator == "" || strings.Contains(fixed, c.Locator)) {
			kept = append(kept, c)
		}
	}
	if kept == nil {
		kept = s.Citations
	}
	kept = slices.DeleteFunc(kept, func(c Citation) bool { // a document is cited by its section when it can be
		return c.Locator == "" && slices.ContainsFunc(kept, func(o Citation) bool { return o.Source == c.Source && o.Locator != "" })
	})
	return graph.Updates(aOutputF.Set(fixed), aCitesF.Set(kept)), nil
}

// save builds the result and, for a success, saves the skill.
func (a *mcpAgent) save(ctx context.Context, s AgentState) (graph.Update[AgentState], error) {
	last := s.Reviews[len(s.Reviews)-1]
	r := Result{Step: s.Step.ID, Agent: a.name, Task: s.Step.Task, Thought: s.Thought, Tool: s.Tool, Arguments: s.Arguments,
		Output: s.Output, OK: last.Verdict != supervisor.VerdictRejected, Attempts: s.Attempts, Reviews: s.Reviews}
	for _, c := range s.Citations {
		c.Step, c.Agent = s.Step.ID, a.name
		r.Citations = append(r.Citations, c)
	}
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
		skill := Skill{Owner: principalOf(ctx), Agent: a.name, Task: s.Step.Task, Tool: s.Tool, Arguments: s.Arguments, Lesson: strings.Join(lessons, " ")}
		if s.Tool == "" {
			skill.Answer = s.Output
		}
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
