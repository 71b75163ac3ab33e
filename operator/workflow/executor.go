package workflow

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/plan"
)

// Names of the executor's nodes.
const (
	// NodePlan validates the plan and reports a [RunStart].
	NodePlan = "plan"
	// NodeStep is the task node that runs one step per Send.
	NodeStep = "step"
	// NodeFinish reports a [RunEnd].
	NodeFinish = "finish"
)

// ExecState is the state of an [Executor]'s graph: the plan to run, the
// user's query, and the steps' outcomes. A parent graph running the
// executor as a subgraph maps its own state to Plan and Query and reads
// Steps (or [ExecState.Result]) back.
type ExecState struct {
	// Query is the user's query, {{user_query}} in templates.
	Query string `json:"query"`
	// Plan is the plan to run; the plan node validates it.
	Plan plan.Plan `json:"plan"`
	// Steps holds the outcome of each finished step, as [State].Steps
	// does: a run whose input already holds a step's succeeded outcome, for
	// the same operator, query and inputs, keeps it.
	Steps []StepResult `json:"steps,omitempty"`
	// Finished lists the steps finished in the current run, in the order
	// their waves ran; the plan node clears it when a run starts.
	Finished []string `json:"finished,omitempty"`
	// Error is why the plan did not run: the validation error naming the
	// step and the field, meant to be shown to the model that wrote the
	// plan. Empty when the plan ran.
	Error string `json:"error,omitempty"`
}

// Step returns the outcome of the step with the given id.
func (s ExecState) Step(id string) (StepResult, bool) {
	for i := range s.Steps {
		if s.Steps[i].ID == id {
			return s.Steps[i], true
		}
	}
	return StepResult{}, false
}

// Result lists the outcomes of the plan's steps in plan order.
func (s ExecState) Result() *Result { return newResult(s.Plan, s.Step) }

// Field handles of ExecState. Finished has two: steps append to it, the
// plan node replaces it.
var (
	execSteps       = graph.Reduce(func(s *ExecState) *[]StepResult { return &s.Steps }, mergeSteps)
	execFinished    = graph.Append(func(s *ExecState) *[]string { return &s.Finished })
	execNewFinished = graph.Replace(func(s *ExecState) *[]string { return &s.Finished })
	execError       = graph.Replace(func(s *ExecState) *string { return &s.Error })
)

// stepTask is the input of one step's task: the step and what it reads
// from the state, so that a task saved in a checkpoint runs again as it
// was sent.
type stepTask struct {
	Step   plan.Step `json:"step"`
	Number int       `json:"number"`
	Query  string    `json:"query"`
	// Deps are the outcomes of the step's dependencies.
	Deps []StepResult `json:"deps,omitempty"`
	// Prior is the step's outcome from an earlier run, if any.
	Prior *StepResult `json:"prior,omitempty"`
}

// Executor runs any [plan.Plan] given in its state on one graph compiled
// once, for plans known only at run time, such as an agent's. Its
// graph runs on its own ([Executor.Run]) or inside a parent graph with
// graph.AddSubgraph, where its steps are tasks of the parent's run: they
// stream with the subgraph node's name in their namespace.
//
// The graph is START → plan → step ⟲ → finish → END. The plan node
// validates the plan (an invalid one sets [ExecState].Error and ends the
// run) and reports a [RunStart]. After it, and after each wave of steps,
// a router sends every step whose dependencies have all finished as a
// task of the step node: the ready steps run in parallel in one
// super-step, up to Config.MaxConcurrency at a time, and a step with
// several dependencies waits for all of them. This is the schedule of a
// compiled [Workflow]: a step starts in the super-step after its last
// dependency's, once every step of that super-step has finished, not the
// moment its own dependencies end. When every step has finished, the
// finish node reports a [RunEnd]. Each step runs as in a compiled
// workflow: the same reports, templates, assembled context, retries and
// fallback, and the same skipping of steps whose dependencies failed.
type Executor struct {
	runner
	graph *graph.Compiled[ExecState]
	task  *graph.TaskNode[ExecState, stepTask]
}

// NewExecutor compiles the executor's graph. cfg is as for [Compile];
// with cfg.Checkpointer the executor's own runs are durable: a run
// stopped in a wave of steps and resumed ([Executor.Resume]) runs only
// the steps of that wave whose outcome was not saved.
func NewExecutor(cfg Config) (*Executor, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	x := &Executor{runner: r}
	g := graph.New[ExecState]()
	g.AddNode(NodePlan, x.plan)
	x.task = graph.AddTask(g, NodeStep, x.step)
	g.AddNode(NodeFinish, x.finish)
	g.AddEdge(graph.START, NodePlan)
	g.AddConditionalEdges(NodePlan, x.dispatch, NodeStep, graph.END)
	g.AddConditionalEdges(NodeStep, x.dispatch, NodeStep, NodeFinish)
	g.AddEdge(NodeFinish, graph.END)
	g.Label(NodePlan, NodeStep, "ready steps").Label(NodePlan, graph.END, "invalid plan").
		Label(NodeStep, NodeStep, "ready steps").Label(NodeStep, NodeFinish, "all finished")
	// Every wave finishes at least one step (dispatch fails otherwise),
	// so a run takes at most len(Steps)+2 super-steps: the limit is never
	// what stops it.
	opts := []graph.CompileOption{graph.WithStepLimit(math.MaxInt32), graph.WithLogger(r.cfg.Logger)}
	if r.cfg.MaxConcurrency > 0 {
		opts = append(opts, graph.WithMaxConcurrency(r.cfg.MaxConcurrency))
	}
	if r.cfg.Checkpointer != nil {
		opts = append(opts, graph.WithCheckpointer(r.cfg.Checkpointer))
	}
	x.graph, err = g.Compile(opts...)
	if err != nil {
		return nil, fmt.Errorf("workflow: compiling the executor: %w", err)
	}
	return x, nil
}

// Graph returns the executor's compiled graph, to stream it or to add it
// to a parent graph with graph.AddSubgraph. Give the run its [operator.Env] with
// [WithEnv] or Config.EnvFrom.
func (x *Executor) Graph() *graph.Compiled[ExecState] { return x.graph }

// Run validates def and runs it for query with env. An invalid def is
// the error, as from [Compile]; step failures are in the result (see
// [Result.Err]), and the error is otherwise the run's own failure, such
// as a cancelled ctx, with the steps finished so far in the result. With
// Config.Checkpointer, ctx names the run's thread (graph.WithConfig).
func (x *Executor) Run(ctx context.Context, def plan.Plan, query string, env operator.Env) (*Result, error) {
	out, err := x.graph.Invoke(WithEnv(ctx, env), ExecState{Query: query, Plan: def})
	return x.result(out, err)
}

// Resume continues the run saved on the thread named in ctx, as
// [Workflow.Resume] does; it needs Config.Checkpointer. It answers as
// [Executor.Run] does: a thread whose saved plan is invalid (the last Run
// was given a plan the executor rejected, or the resuming executor's
// Config refuses the saved plan) returns the plan's error, such as a
// *plan.StepError, and a nil result, never the outcomes that an earlier
// plan's steps left on the thread. A thread with no checkpoint is an
// error wrapping [ErrNoSavedRun] (and [graph.ErrNothingToResume]), and
// nothing runs.
func (x *Executor) Resume(ctx context.Context, env operator.Env, opts ...graph.RunOption) (*Result, error) {
	if err := x.checkSaved(ctx); err != nil {
		return nil, err
	}
	out, err := x.graph.Invoke(WithEnv(ctx, env), ExecState{}, opts...)
	return x.result(out, err)
}

// result is the answer of Run and Resume from the run's final state.
func (x *Executor) result(out ExecState, err error) (*Result, error) {
	if err == nil && out.Error != "" {
		// The plan node rejected the plan; check it again for the typed
		// error.
		if _, err := x.check(&out.Plan); err != nil {
			return nil, err
		}
		return nil, errors.New(out.Error)
	}
	return out.Result(), err
}

func (x *Executor) plan(ctx context.Context, s ExecState) (graph.Update[ExecState], error) {
	if _, err := x.check(&s.Plan); err != nil {
		return graph.Updates(execError.Set(err.Error()), execNewFinished.Set(nil)), nil
	}
	x.report(ctx, x.env(ctx), RunStart{Goal: s.Plan.Goal, Steps: len(s.Plan.Steps)})
	return graph.Updates(execError.Set(""), execNewFinished.Set(nil)), nil
}

// dispatch sends the steps whose dependencies have all finished, or goes
// to finish when every step has.
func (x *Executor) dispatch(_ context.Context, s ExecState) (graph.Route, error) {
	if s.Error != "" {
		return graph.To(graph.END), nil
	}
	finished := make(map[string]bool, len(s.Finished))
	for _, id := range s.Finished {
		finished[id] = true
	}
	var sends []graph.Send
	for i, st := range s.Plan.Steps {
		if finished[st.ID] || !allIn(st.DependsOn, finished) {
			continue
		}
		t := stepTask{Step: st, Number: i + 1, Query: s.Query}
		for _, d := range st.DependsOn {
			dr, _ := s.Step(d)
			t.Deps = append(t.Deps, dr)
		}
		if prior, ok := s.Step(st.ID); ok {
			t.Prior = &prior
		}
		sends = append(sends, x.task.Send(t))
	}
	if len(sends) > 0 {
		return graph.Dispatch(sends...), nil
	}
	if len(finished) < len(s.Plan.Steps) {
		// The plan node rejects cycles, so this needs a state edited by
		// hand (Thread.Update).
		return graph.Route{}, fmt.Errorf("workflow: no step of the plan can run, %d of %d finished: Finished %v does not match the plan's dependencies",
			len(finished), len(s.Plan.Steps), s.Finished)
	}
	return graph.To(NodeFinish), nil
}

func allIn(ids []string, set map[string]bool) bool {
	for _, id := range ids {
		if !set[id] {
			return false
		}
	}
	return true
}

func (x *Executor) step(ctx context.Context, t stepTask) (graph.Update[ExecState], error) {
	inputs, err := compileMapping(t.Step.InputMapping)
	if err != nil {
		// The plan node validated the mapping.
		return graph.Update[ExecState]{}, fmt.Errorf("workflow: step %s: input_mapping: %w", t.Step.ID, err)
	}
	// A resumed run's plan comes from the checkpoint, not through check.
	if err := x.checkRefs(t.Step.ID, inputs); err != nil {
		return graph.Update[ExecState]{}, fmt.Errorf("workflow: %w", err)
	}
	sr := stepRun{step: t.Step, number: t.Number, inputs: inputs, query: t.Query,
		deps: func(id string) (StepResult, bool) {
			i := slices.IndexFunc(t.Deps, func(r StepResult) bool { return r.ID == id })
			if i < 0 {
				return StepResult{}, false
			}
			return t.Deps[i], true
		}}
	if t.Prior != nil {
		sr.prior = *t.Prior
	}
	res, changed, err := x.runStep(ctx, sr)
	if err != nil {
		return graph.Update[ExecState]{}, err
	}
	u := execFinished.Set([]string{t.Step.ID})
	if changed {
		u = graph.Updates(u, execSteps.Set([]StepResult{res}))
	}
	return u, nil
}

func (x *Executor) finish(ctx context.Context, s ExecState) (graph.Update[ExecState], error) {
	x.reportEnd(ctx, s.Result().Steps)
	return graph.Update[ExecState]{}, nil
}
