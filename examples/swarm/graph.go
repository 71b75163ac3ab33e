package swarm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/supervisor"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Node names of the swarm graph.
const (
	Preprocess = "preprocess"
	Supervisor = "supervisor"
)

// build wires the star: preprocess → supervisor → (agents | qa), every
// agent back to the supervisor, qa → END. Each agent is a subgraph.
func (w *Swarm) build(saver checkpoint.Saver) (*graph.Compiled[State], error) {
	g := graph.New[State]()
	g.AddNode(Preprocess, w.preprocess)
	g.AddNode(Supervisor, w.supervise)
	g.AddNode(QA, w.qa)
	g.AddEdge(graph.START, Preprocess)
	g.AddEdge(Preprocess, Supervisor)
	for _, name := range w.agents {
		child, err := w.buildAgent(name)
		if err != nil {
			return nil, err
		}
		graph.AddSubgraph(g, name, child, w.agentInput(name), agentOutput)
		g.AddEdge(name, Supervisor)
	}
	targets := append(slices.Clone(w.agents), QA)
	g.AddConditionalEdges(Supervisor, func(_ context.Context, s State) (graph.Route, error) {
		return graph.To(s.Next...), nil
	}, targets...)
	g.AddEdge(QA, graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver), graph.WithLogger(w.log))
	if err != nil {
		return nil, fmt.Errorf("swarm: %w", err)
	}
	return c, nil
}

// preprocess initialises the run's state: the seed's input validation.
func (w *Swarm) preprocess(_ context.Context, s State) (graph.Update[State], error) {
	req := strings.Join(strings.Fields(s.Request), " ")
	if req == "" {
		return graph.Update[State]{}, ErrEmptyTask
	}
	return graph.Updates(requestF.Set(req), turnsF.Set(0), stallsF.Set(0), nextF.Set(nil)), nil
}

// cards lists the agents as the supervisor sees them: each MCP server with
// its tools. A server that cannot be listed is shown with no tools.
func (w *Swarm) cards(ctx context.Context) []AgentCard {
	tools, err := w.registry.Tools(ctx)
	if err != nil {
		w.log.Warn("swarm: listing tools", zap.Error(err))
	}
	cards := make([]AgentCard, 0, len(w.agents))
	for _, name := range w.agents {
		server := w.servers[name]
		c := AgentCard{Name: name, Server: server, Description: w.cfg.Descriptions[server]}
		for _, t := range tools {
			if t.Server != server || !t.Available {
				continue
			}
			tc := ToolCard{Name: t.Tool, Description: t.Description}
			if full, err := w.registry.Tool(ctx, t.Name); err == nil {
				tc.InputSchema = full.InputSchema
			}
			c.Tools = append(c.Tools, tc)
		}
		if c.Description == "" {
			c.Description = "Specialist for the " + server + " MCP server."
		}
		if len(c.Tools) == 0 {
			c.Description += " (unavailable: the server lists no tools)"
		}
		cards = append(cards, c)
	}
	return cards
}

// supervise is the planner: it asks the model for the updated plan and the
// agents to run, keeps what is settled settled, and breaks loops.
func (w *Swarm) supervise(ctx context.Context, s State) (graph.Update[State], error) {
	if s.Turns >= w.cfg.MaxTurns {
		return w.finish(ctx, s, fmt.Sprintf("Turn limit (%d) reached; hand over to QA.", w.cfg.MaxTurns), s.Plan, agent.TokenUsage{})
	}
	cards := w.cards(ctx)
	res, err := agent.Call[Decision](ctx, w.client, supervisorPrompt(s, cards, w.cfg.MaxTurns), w.opts(SupervisorSystem)...)
	if err != nil {
		if ctx.Err() != nil {
			return graph.Update[State]{}, ctx.Err()
		}
		var soe *agent.StructuredOutputError
		if errors.As(err, &soe) {
			w.log.Warn("swarm: supervisor gave no valid decision", zap.Error(err))
			return w.finish(ctx, s, "The supervisor gave no valid plan; hand over to QA.", s.Plan, res.Usage)
		}
		return graph.Update[State]{}, err
	}
	d := res.Value
	plan := settle(s.Plan, d.Plan)

	// Route only to known agents that have a ready step.
	var next []string
	for _, a := range d.SelectedAgents {
		if w.servers[a] != "" && !slices.Contains(next, a) && readyStep(plan, a) != nil {
			next = append(next, a)
		}
	}
	if len(next) == 0 {
		return w.finish(ctx, s, d.Thought, plan, res.Usage)
	}
	// Circuit breaker: the same agents again without a new success.
	stalls := 0
	if slices.Equal(next, s.Next) && !progressed(s) {
		stalls = s.Stalls + 1
	}
	if stalls >= 2 {
		return w.finish(ctx, s, d.Thought+" Circuit breaker: "+strings.Join(next, ", ")+" routed again without progress; hand over to QA.", plan, res.Usage)
	}
	var tasks []Step
	for _, a := range next {
		tasks = append(tasks, *readyStep(plan, a))
	}
	if err := graph.Emit(ctx, Event{Kind: EventPlan, Text: d.Thought, Plan: plan, Agents: next}); err != nil {
		return graph.Update[State]{}, err
	}
	return graph.Updates(planF.Set(plan), thoughtsF.Set([]string{d.Thought}), tasksF.Set(tasks),
		nextF.Set(next), turnsF.Set(s.Turns+1), stallsF.Set(stalls), usageF.Set(res.Usage)), nil
}

// finish routes to QA.
func (w *Swarm) finish(ctx context.Context, s State, thought string, plan []Step, usage agent.TokenUsage) (graph.Update[State], error) {
	if err := graph.Emit(ctx, Event{Kind: EventPlan, Text: thought, Plan: plan}); err != nil {
		return graph.Update[State]{}, err
	}
	return graph.Updates(planF.Set(plan), thoughtsF.Set([]string{thought}), nextF.Set([]string{QA}),
		turnsF.Set(s.Turns+1), usageF.Set(usage)), nil
}

// settle keeps the settled steps of the old plan as they were: a model
// may reword the plan, not reopen or rewrite what is done or failed.
func settle(old, plan []Step) []Step {
	plan = slices.Clone(plan)
	for _, o := range old {
		if o.Status == StepPending {
			continue
		}
		i := slices.IndexFunc(plan, func(s Step) bool { return s.ID == o.ID })
		if i < 0 {
			plan = append(plan, o)
		} else {
			plan[i] = o
		}
	}
	return plan
}

// readyStep returns agent's first pending step whose dependencies are done.
func readyStep(plan []Step, agentName string) *Step {
	done := map[string]bool{}
	for _, s := range plan {
		done[s.ID] = s.Status == StepDone
	}
	for i, s := range plan {
		if s.Agent != agentName || s.Status != StepPending {
			continue
		}
		ready := true
		for _, d := range s.DependsOn {
			ready = ready && done[d]
		}
		if ready {
			return &plan[i]
		}
	}
	return nil
}

// progressed reports whether the results of the last routing include a
// success.
func progressed(s State) bool {
	n := len(s.Next)
	if n > len(s.Results) {
		n = len(s.Results)
	}
	for _, r := range s.Results[len(s.Results)-n:] {
		if r.OK {
			return true
		}
	}
	return false
}

// qa consolidates the final answer from the plan and the results.
func (w *Swarm) qa(ctx context.Context, s State) (graph.Update[State], error) {
	latest := map[string]Result{}
	for _, r := range s.Results {
		latest[r.Step] = r
	}
	var draft strings.Builder
	var obs []supervisor.Observation
	done, failed := 0, 0
	for _, st := range s.Plan {
		r, ran := latest[st.ID]
		switch {
		case st.Status == StepDone && ran:
			done++
			fmt.Fprintf(&draft, "- %s: %s\n", st.Task, oneParagraph(r.Output))
			obs = append(obs, supervisor.Observation{Source: st.ID + " " + st.Agent, Content: r.Output})
		case ran && !r.OK:
			failed++
			fmt.Fprintf(&draft, "- %s: not done (%s failed: %s)\n", st.Task, st.Agent, r.Error)
			obs = append(obs, supervisor.Observation{Source: st.ID + " " + st.Agent, Err: r.Error})
		default:
			failed++
			fmt.Fprintf(&draft, "- %s: not done\n", st.Task)
		}
	}
	status := "complete"
	switch {
	case done == 0:
		status = "failed"
	case failed > 0:
		status = "partial"
	}
	answer := strings.TrimSpace(draft.String())
	if answer == "" {
		answer = "The swarm made no plan for this request."
	}
	var usage agent.TokenUsage
	res, err := supervisor.Write(ctx, w.client, supervisor.WriteInput{Query: s.Request, Observations: obs, Draft: answer}, w.opts("")...)
	switch {
	case err == nil && strings.TrimSpace(res.Value) != "":
		answer, usage = strings.TrimSpace(res.Value), res.Usage
	case ctx.Err() != nil:
		return graph.Update[State]{}, ctx.Err()
	case err != nil:
		w.log.Warn("swarm: writing the answer; using the draft", zap.Error(err))
	}
	if err := graph.Emit(ctx, Event{Kind: EventAnswer, Text: answer}); err != nil {
		return graph.Update[State]{}, err
	}
	return graph.Updates(answerF.Set(answer), statusF.Set(status), usageF.Set(usage)), nil
}

func oneParagraph(s string) string { return strings.Join(strings.Fields(s), " ") }

// opts are the call options: the system prompt and the configured model.
func (w *Swarm) opts(system string) []agent.Option {
	var o []agent.Option
	if system != "" {
		o = append(o, agent.WithSystem(system))
	}
	if w.cfg.Model != "" {
		o = append(o, agent.WithModel(w.cfg.Model))
	}
	return o
}
