package swarm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Node names of the swarm graph.
const (
	Preprocess = "preprocess"
	Supervisor = "supervisor"
)

// build wires the star: preprocess → supervisor → (agents | qa), every
// agent back to the supervisor, qa → END. Each agent is a subgraph,
// checkpointed on saver too so that a resumed run goes on inside it.
func (t *team) build(saver checkpoint.Saver) (*graph.Compiled[State], error) {
	g := graph.New[State]()
	g.AddNode(Preprocess, t.preprocess)
	g.AddNode(Supervisor, t.supervise)
	g.AddNode(QA, t.qa)
	g.AddEdge(graph.START, Preprocess)
	g.AddEdge(Preprocess, Supervisor)
	var names []string
	for _, a := range t.agents {
		switch {
		case a.architect:
			g.AddNode(a.name, t.architect)
		case a.team != nil:
			graph.AddSubgraph(g, a.name, a.team.compiled, a.team.input(a.name), a.team.output(a.name))
		default:
			child, err := t.w.buildAgent(a, saver)
			if err != nil {
				return nil, err
			}
			graph.AddSubgraph(g, a.name, child, t.w.agentInput(a.name), agentOutput)
		}
		g.AddEdge(a.name, Supervisor)
		names = append(names, a.name)
	}
	targets := append(names, QA, Supervisor)
	g.AddConditionalEdges(Supervisor, func(_ context.Context, s State) (graph.Route, error) {
		return graph.To(s.Next...), nil
	}, targets...)
	g.Label(Supervisor, Supervisor, "re-selected done work")
	g.AddEdge(QA, graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver), graph.WithLogger(t.w.log), graph.WithHooks(t.w.hooks()))
	if err != nil {
		return nil, fmt.Errorf("swarm: %w", err)
	}
	return c, nil
}

// preprocess initialises the run's state: the seed's input validation.
func (t *team) preprocess(_ context.Context, s State) (graph.Update[State], error) {
	req := strings.Join(strings.Fields(s.Request), " ")
	if req == "" {
		return graph.Update[State]{}, ErrEmptyTask
	}
	u := graph.Updates(turnsF.Set(0), stallsF.Set(0), nextF.Set(nil),
		messagesF.Set(model.Messages{model.User(req)}))
	if req != s.Request {
		// Written only when it changes: the checkpoint after this
		// step would store the request again.
		u = graph.Updates(u, requestF.Set(req))
	}
	if len(s.Plan) == 0 && len(t.workflow) > 0 {
		u = graph.Updates(u, planF.Set(slices.Clone(t.workflow)))
	}
	return u, nil
}

// cards lists the team's agents as the supervisor sees them: each MCP
// server with its tools, each agent with no server as answering from the
// model, each sub-team by its description. A server that cannot be listed
// is shown with no tools.
func (t *team) cards(ctx context.Context) []AgentCard {
	tools, err := t.w.registry.Tools(ctx)
	if err != nil {
		t.w.log.Warn("swarm: listing tools", zap.Error(err))
	}
	cards := make([]AgentCard, 0, len(t.agents))
	for _, a := range t.agents {
		if !a.offered(ctx) {
			continue
		}
		c := AgentCard{Name: a.name, Server: a.server, Description: a.description}
		switch {
		case a.team != nil:
			if c.Description == "" {
				c.Description = "A team of agents run as one node."
			}
			cards = append(cards, c)
			continue
		case a.server == "":
			if c.Description == "" {
				c.Description = "Answers from the model alone; no tools."
			}
			cards = append(cards, c)
			continue
		}
		for _, tl := range tools {
			if tl.Server != a.server || !tl.Available {
				continue
			}
			tc := model.ToolDef{Name: tl.Tool, Description: tl.Description}
			if full, err := t.w.registry.Tool(ctx, tl.Name); err == nil {
				tc.Parameters = full.InputSchema
			}
			c.Tools = append(c.Tools, tc)
		}
		if c.Description == "" {
			c.Description = "Specialist for the " + a.server + " MCP server."
		}
		if len(c.Tools) == 0 {
			c.Description += " (unavailable: the server lists no tools)"
		}
		cards = append(cards, c)
	}
	return cards
}

// supervise is the planner: it asks the model for the updated plan and the
// agents to run, decides progress from the results rather than the model's
// word, and breaks loops.
func (t *team) supervise(ctx context.Context, s State) (graph.Update[State], error) {
	if s.Turns >= t.w.cfg.MaxTurns {
		return t.finish(ctx, s, fmt.Sprintf("Turn limit (%d) reached; hand over to QA.", t.w.cfg.MaxTurns), settle(s.Plan, s.Plan, s.Results), model.Usage{})
	}
	cards := t.cards(ctx)
	res, err := agent.Call[Decision](ctx, t.w.client, supervisorPrompt(s, cards, t.w.cfg.MaxTurns), t.w.opts(SupervisorSystem)...)
	if err != nil {
		if ctx.Err() != nil {
			return graph.Update[State]{}, ctx.Err()
		}
		var soe *agent.StructuredOutputError
		if errors.As(err, &soe) {
			t.w.log.Warn("swarm: supervisor gave no valid decision", zap.Error(err))
			return t.finish(ctx, s, "The supervisor gave no valid plan; hand over to QA.", settle(s.Plan, s.Plan, s.Results), res.Usage)
		}
		return graph.Update[State]{}, &ModelError{Node: Supervisor, Err: err}
	}
	d := res.Value
	plan := settle(s.Plan, d.Plan, s.Results)

	// Route only to known agents that have a ready step. An agent selected
	// with nothing ready whose work is done was re-selected: no progress.
	var next []string
	reselected := false
	for _, a := range d.SelectedAgents {
		if !t.hasAgent(ctx, a) || slices.Contains(next, a) {
			continue
		}
		if readyStep(plan, a) != nil {
			next = append(next, a)
		} else if slices.ContainsFunc(plan, func(st Step) bool { return st.Agent == a && st.Status == StepDone }) {
			reselected = true
		}
	}
	stalls := 0
	switch {
	case len(next) == 0 && reselected:
		stalls = s.Stalls + 1
	case len(next) == 0:
		return t.finish(ctx, s, d.Thought, plan, res.Usage)
	case slices.Equal(next, s.Next) && !progressed(s):
		stalls = s.Stalls + 1
	}
	if stalls >= 2 {
		why := strings.Join(next, ", ") + " routed again without progress"
		if len(next) == 0 {
			why = strings.Join(d.SelectedAgents, ", ") + " selected again for steps already done"
		}
		return t.finish(ctx, s, d.Thought+" Circuit breaker: "+why+"; hand over to QA.", plan, res.Usage)
	}
	var tasks []Step
	trace := []TraceEntry{{Kind: TraceThought, Node: Supervisor, Text: d.Thought}}
	for _, a := range next {
		st := *readyStep(plan, a)
		tasks = append(tasks, st)
		trace = append(trace, TraceEntry{Kind: TraceTransition, Node: Supervisor, Step: st.ID, Text: Supervisor + " -> " + a})
	}
	if len(next) == 0 { // re-selected finished work: think again
		next = []string{Supervisor}
		trace = append(trace, TraceEntry{Kind: TraceTransition, Node: Supervisor, Text: Supervisor + " -> " + Supervisor + " (selected agents have no pending step)"})
	}
	emitted := next
	if next[0] == Supervisor {
		emitted = nil
	}
	if err := graph.Emit(ctx, Event{Kind: EventPlan, Text: d.Thought, Plan: plan, Agents: emitted}); err != nil {
		return graph.Update[State]{}, err
	}
	return graph.Updates(planF.Set(plan), thoughtsF.Set([]string{d.Thought}), tasksF.Set(tasks),
		nextF.Set(next), turnsF.Set(s.Turns+1), stallsF.Set(stalls), usageF.Set(res.Usage), traceF.Set(trace)), nil
}

// finish routes to QA.
func (t *team) finish(ctx context.Context, s State, thought string, plan []Step, usage model.Usage) (graph.Update[State], error) {
	if err := graph.Emit(ctx, Event{Kind: EventPlan, Text: thought, Plan: plan}); err != nil {
		return graph.Update[State]{}, err
	}
	trace := []TraceEntry{{Kind: TraceThought, Node: Supervisor, Text: thought},
		{Kind: TraceTransition, Node: Supervisor, Text: Supervisor + " -> " + QA}}
	return graph.Updates(planF.Set(plan), thoughtsF.Set([]string{thought}), nextF.Set([]string{QA}),
		turnsF.Set(s.Turns+1), usageF.Set(usage), traceF.Set(trace)), nil
}

// settle decides the plan's statuses from the results, not from the
// model's say-so: a step with an approved result is done, and so is a
// step that repeats the agent and task of a done step (the model
// re-planned finished work under a new id). Settled steps of the old plan
// stay as they were: a model may reword the plan, not reopen what is done.
func settle(old, plan []Step, results []Result) []Step {
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
	ok := map[string]bool{}     // step id with an approved result
	solved := map[string]bool{} // agent + task with an approved result
	for _, r := range results {
		if r.OK {
			ok[r.Step] = true
			solved[r.Agent+"\x00"+normTask(r.Task)] = true
		}
	}
	for i, st := range plan {
		if st.Status == StepDone {
			continue
		}
		if ok[st.ID] || solved[st.Agent+"\x00"+normTask(st.Task)] {
			plan[i].Status = StepDone
		}
	}
	return plan
}

func normTask(t string) string { return strings.ToLower(strings.Join(strings.Fields(t), " ")) }

// qa consolidates the final answer from the plan and the results. A step
// counts as done when it has an approved result, whatever the plan says,
// and the answer ends with the sources the results used.
func (t *team) qa(ctx context.Context, s State) (graph.Update[State], error) {
	latest := map[string]Result{}
	for _, r := range s.Results {
		if prev, seen := latest[r.Step]; seen && prev.OK && !r.OK {
			continue // a later failure does not undo an approved result
		}
		latest[r.Step] = r
	}
	var draft strings.Builder
	var obs []supervisor.Observation
	done, failed := 0, 0
	for _, st := range settle(s.Plan, s.Plan, s.Results) {
		r, ran := latest[st.ID]
		switch {
		case st.Status == StepDone && ran && r.OK:
			done++
			if out := strings.TrimSpace(r.Output); strings.Contains(out, "\n") {
				fmt.Fprintf(&draft, "- %s:\n\n%s\n\n", st.Task, out) // a program or a table keeps its lines
			} else {
				fmt.Fprintf(&draft, "- %s: %s\n", st.Task, oneParagraph(out))
			}
			obs = append(obs, supervisor.Observation{Source: st.ID + " " + st.Agent, Content: r.Output})
		case st.Status == StepDone:
			done++ // a repeat of a step done under another id
		case ran && !r.OK:
			failed++
			fmt.Fprintf(&draft, "- %s: not done (%s failed: %s)\n", st.Task, st.Agent, r.Error)
			obs = append(obs, supervisor.Observation{Source: st.ID + " " + st.Agent, Err: r.Error})
		default:
			failed++
			fmt.Fprintf(&draft, "- %s: not done\n", st.Task)
		}
	}
	status := StatusComplete
	switch {
	case done == 0:
		status = StatusFailed
	case failed > 0:
		status = StatusPartial
	}
	answer := strings.TrimSpace(draft.String())
	if answer == "" {
		answer = "The swarm made no plan for this request."
	}
	var usage model.Usage
	res, err := supervisor.Write(ctx, t.w.client, supervisor.WriteInput{Query: s.Request, Observations: obs, Draft: answer}, t.w.opts("")...)
	switch {
	case err == nil && strings.TrimSpace(res.Value) != "":
		answer, usage = strings.TrimSpace(res.Value), res.Usage
	case ctx.Err() != nil:
		return graph.Update[State]{}, ctx.Err()
	case err != nil:
		t.w.log.Warn("swarm: writing the answer; using the draft", zap.Error(err))
	}
	if src := sourcesText(s.Citations); src != "" && t.name == "" { // a team's citations go up with its result
		answer += "\n\n" + src
	}
	if err := graph.Emit(ctx, Event{Kind: EventAnswer, Text: answer}); err != nil {
		return graph.Update[State]{}, err
	}
	msg := model.Assistant(answer)
	msg.Name = QA
	return graph.Updates(answerF.Set(answer), statusF.Set(status), usageF.Set(usage), messagesF.Set(model.Messages{msg})), nil
}

// Run statuses, written by QA.
const (
	StatusComplete = "complete" // every step of the plan is done
	StatusPartial  = "partial"  // some steps are done
	StatusFailed   = "failed"   // none is
)

// sourcesText lists the citations once each, numbered, with the steps
// that used them.
func sourcesText(cs []Citation) string {
	type key struct{ src, loc string }
	var order []key
	steps := map[key][]string{}
	for _, c := range cs {
		k := key{c.Source, c.Locator}
		if _, seen := steps[k]; !seen {
			order = append(order, k)
		}
		if !slices.Contains(steps[k], c.Step) {
			steps[k] = append(steps[k], c.Step)
		}
	}
	if len(order) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Sources:")
	for i, k := range order {
		fmt.Fprintf(&b, "\n[%d] %s", i+1, k.src)
		if k.loc != "" {
			fmt.Fprintf(&b, " (%s)", k.loc)
		}
		fmt.Fprintf(&b, ", used by %s", strings.Join(steps[k], ", "))
	}
	return b.String()
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

// hasAgent reports whether name is one of the team's agents offered to the
// run in ctx.
func (t *team) hasAgent(ctx context.Context, name string) bool {
	return slices.ContainsFunc(t.agents, func(a *mcpAgent) bool { return a.name == name && a.offered(ctx) })
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
