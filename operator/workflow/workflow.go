package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/plan"
	"go.uber.org/zap"
)

// Defaults of [Config] fields left zero.
const (
	// DefaultMaxConcurrency is the number of steps that run at once.
	DefaultMaxConcurrency = 4
	// DefaultMaxInputBytes is the largest size of a step's resolved
	// inputs together: 16 MiB.
	DefaultMaxInputBytes = 16 << 20
	// DefaultMaxTemplateRefs is the most {{...}} references in a
	// step's input mapping.
	DefaultMaxTemplateRefs = 100
)

// Names of the graph nodes around the steps. Step ids cannot contain ':',
// so they never collide.
const (
	NodeCreated  = "workflow:created"
	NodeComplete = "workflow:complete"
)

// Config configures [Compile].
type Config struct {
	// Operators creates and runs the steps' operators. Required.
	Operators *operator.Registry
	// Assembler, if set, assembles each step's context from its operator's
	// Metadata.ContextRequirements (the step's query is the turn's query
	// when the run has no operator.Env.Turn). Compile checks that it serves every
	// requirement of every step's operator. Nil means operators get no
	// assembled context.
	Assembler *memory.Assembler
	// MaxConcurrency bounds how many steps run at once. Zero means
	// DefaultMaxConcurrency; negative means no bound.
	MaxConcurrency int
	// MaxInputBytes bounds the size of a step's resolved inputs, all
	// its inputs together: the bytes of text their templates render, a
	// value passed whole (a template that is exactly one reference)
	// counting its length when it is a string and the length of its
	// JSON otherwise, once per reference. A step whose inputs would be
	// larger fails, before its operator runs,
	// with an error naming the step, the input and the limit, so that a
	// plan cannot copy a large output many times over. Zero means
	// DefaultMaxInputBytes; negative means no bound.
	MaxInputBytes int
	// MaxTemplateRefs bounds the {{...}} references in a step's input
	// mapping, all its inputs together; a plan with more is invalid (a
	// *plan.StepError naming the step). Zero
	// means DefaultMaxTemplateRefs; negative means no bound.
	MaxTemplateRefs int
	// Logger receives debug logs. Nil means no logging.
	Logger *zap.Logger
	// Checkpointer, if set, saves the workflow's runs
	// (graph.WithCheckpointer): every run then names a thread with
	// graph.WithConfig, a checkpoint is written after each super-step and,
	// in a parallel step, each step's outcome as soon as it finishes, and
	// [Workflow.Resume] continues a thread. Nil means runs are not saved.
	// A workflow run as a subgraph of a durable parent saves each run on a
	// thread of its own, named after the parent's (graph.SubgraphThread);
	// without a Checkpointer it is one task of its parent, saved by the
	// parent's checkpointer (see "Durable runs" in the package doc).
	Checkpointer checkpoint.Saver
	// EnvFrom, if set, gives each run its [operator.Env] from the run's context, in
	// place of [WithEnv]: for a host that already carries its request's
	// reporter, MCP session and elicitor in the context under a key of its
	// own, such as a parent graph running the workflow as a subgraph.
	EnvFrom func(ctx context.Context) operator.Env
}

// ActionKind is the kind of the action a step records in the operator.Env's turn
// (actions.this_turn): the operator is its name, "ID: Name" its detail.
const ActionKind = "workflow_step"

// Status is a step's outcome.
type Status string

// Step statuses.
const (
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
	// Skipped: the step did not run because a dependency did not succeed.
	Skipped Status = "skipped"
)

// StepResult is the outcome of one step.
type StepResult struct {
	ID       string
	Name     string
	Operator string
	// Number is the step's position in the plan, from 1, as in
	// [StepStart] and [StepEnd].
	Number int
	Status Status
	// Output is the operator's output (Result.Output); nil unless the step
	// succeeded.
	Output any
	// Result is the operator's full result; nil unless the step succeeded.
	Result *operator.Result
	// Inputs are the step's resolved input mapping.
	Inputs map[string]any
	// Query is the query the operator got: the "query" input when it
	// resolved to a string, the user's query otherwise.
	Query string
	// Err is why the step failed, or a [*SkipError] saying why it was
	// skipped.
	Err      error
	Duration time.Duration
}

// State is the state of the graph a workflow compiles to. A parent graph
// running the workflow as a subgraph maps its own state to Query and reads
// Steps back.
type State struct {
	// Query is the user's query, {{user_query}} in templates.
	Query string
	// Steps holds the outcome of each finished step, one per step, in the
	// order they finished (parallel steps in plan order). A run
	// whose input already holds a step's succeeded outcome keeps it and
	// does not run the step again; a step that runs again replaces its
	// earlier outcome in place (see "Durable runs" in the package doc).
	Steps []StepResult
}

// Step returns the outcome of the step with the given id.
func (s State) Step(id string) (StepResult, bool) {
	for i := range s.Steps {
		if s.Steps[i].ID == id {
			return s.Steps[i], true
		}
	}
	return StepResult{}, false
}

// StepsField is the handle of State.Steps. Each step writes its outcome:
// it replaces an earlier outcome of the same step, or is appended.
var StepsField = graph.Reduce(func(s *State) *[]StepResult { return &s.Steps }, mergeSteps)

// mergeSteps merges step outcomes by step id. A new step's outcome is
// appended, as graph.Append does; old is copied (states share their
// slices) only when an outcome replaces one in it.
func mergeSteps(old, new []StepResult) []StepResult {
	out := old
	for _, r := range new {
		i := slices.IndexFunc(out, func(o StepResult) bool { return o.ID == r.ID })
		if i < 0 {
			out = append(out, r)
			continue
		}
		if len(old) > 0 && &out[0] == &old[0] {
			out = slices.Clone(out)
		}
		out[i] = r
	}
	return out
}

type envKey struct{}

// WithEnv returns a context carrying env for the workflow runs under it,
// so that a compiled workflow serves any number of requests and runs as a
// subgraph. The steps use env's Reporter (the workflow's reports and the
// operators' messages; nil means the reports only go to the graph's stream),
// Elicitor (nil refuses questions), Tools (the request's MCP session) and
// Turn (which receives each step's result under the step's id and
// supplies the assembled context); Query and Assembled are per call and
// not used.
func WithEnv(ctx context.Context, env operator.Env) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

func envFrom(ctx context.Context) operator.Env {
	env, _ := ctx.Value(envKey{}).(operator.Env)
	return env
}

// Workflow is a validated plan compiled to a graph.
type Workflow struct {
	runner
	def    plan.Plan
	inputs [][]input // per step, its parsed input mapping
	graph  *graph.Compiled[State]
}

// runner runs steps: the code the compiled workflows and the [Executor]
// share.
type runner struct {
	cfg Config
}

// newRunner checks cfg and fills in its defaults.
func newRunner(cfg Config) (runner, error) {
	if cfg.Operators == nil {
		return runner{}, errors.New("workflow: Config.Operators is nil; pass the operator registry")
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	switch {
	case cfg.MaxConcurrency == 0:
		cfg.MaxConcurrency = DefaultMaxConcurrency
	case cfg.MaxConcurrency < 0:
		cfg.MaxConcurrency = 0
	}
	cfg.MaxInputBytes = bound(cfg.MaxInputBytes, DefaultMaxInputBytes)
	cfg.MaxTemplateRefs = bound(cfg.MaxTemplateRefs, DefaultMaxTemplateRefs)
	return runner{cfg: cfg}, nil
}

// bound returns a limit of Config: def for zero, 0 (no bound) for a
// negative v.
func bound(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// env returns the operator.Env of the run ctx belongs to.
func (w *runner) env(ctx context.Context) operator.Env {
	if w.cfg.EnvFrom != nil {
		return w.cfg.EnvFrom(ctx)
	}
	return envFrom(ctx)
}

// check validates def for the runner's operators and assembler and parses
// its input mappings, one list per step.
func (w *runner) check(def *plan.Plan) ([][]input, error) {
	if err := def.Validate(w.cfg.Operators); err != nil {
		return nil, err
	}
	if w.cfg.Assembler != nil {
		for _, st := range def.Steps {
			meta, _ := w.cfg.Operators.Lookup(st.Operator)
			if err := w.cfg.Assembler.Check(meta.ContextRequirements...); err != nil {
				return nil, &plan.StepError{Step: st.ID, Field: "operator", Reason: fmt.Sprintf("%s needs context the assembler cannot give: %v", st.Operator, err), Err: err}
			}
		}
	}
	inputs := make([][]input, len(def.Steps))
	for i, st := range def.Steps {
		in, err := compileMapping(st.InputMapping)
		if err != nil {
			return nil, &plan.StepError{Step: st.ID, Field: "input_mapping", Reason: err.Error(), Err: err}
		}
		if err := w.checkRefs(st.ID, in); err != nil {
			return nil, err
		}
		inputs[i] = in
	}
	return inputs, nil
}

// checkRefs refuses a step whose inputs hold more {{...}} references,
// together, than Config.MaxTemplateRefs.
func (w *runner) checkRefs(step string, in []input) error {
	lim := w.cfg.MaxTemplateRefs
	if lim <= 0 {
		return nil
	}
	n := 0
	for _, x := range in {
		n += x.refs()
	}
	if n > lim {
		return &plan.StepError{Step: step, Field: "input_mapping",
			Reason: fmt.Sprintf("has %d {{...}} references over its inputs, more than the limit of %d per step (Config.MaxTemplateRefs); reference each value once", n, lim)}
	}
	return nil
}

// Compile validates def against cfg.Operators and compiles it to a graph:
// one node per step, an edge from each dependency to its dependent, so
// independent steps run in parallel in the same super-step and a step with
// several dependencies waits for all of them.
func Compile(def plan.Plan, cfg Config) (*Workflow, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	cfg = r.cfg
	// Keep a copy, so that the caller may reuse its plan.
	def.Steps = slices.Clone(def.Steps)
	for i := range def.Steps {
		def.Steps[i].DependsOn = slices.Clone(def.Steps[i].DependsOn)
		def.Steps[i].InputMapping = maps.Clone(def.Steps[i].InputMapping)
	}
	inputs, err := r.check(&def)
	if err != nil {
		return nil, err
	}
	w := &Workflow{runner: r, def: def, inputs: inputs}
	dependents := make(map[string]bool)
	g := graph.New[State]()
	g.AddNode(NodeCreated, w.created)
	g.AddEdge(graph.START, NodeCreated)
	for i, s := range def.Steps {
		g.AddNode(s.ID, w.step(i))
		if len(s.DependsOn) == 0 {
			g.AddEdge(NodeCreated, s.ID)
		}
		for _, d := range s.DependsOn {
			g.AddEdge(d, s.ID)
			dependents[d] = true
		}
	}
	g.AddNode(NodeComplete, w.complete)
	for _, s := range def.Steps {
		if !dependents[s.ID] {
			g.AddEdge(s.ID, NodeComplete)
		}
	}
	g.AddEdge(NodeComplete, graph.END)
	opts := []graph.CompileOption{graph.WithStepLimit(len(def.Steps) + 3), graph.WithLogger(cfg.Logger)}
	if cfg.MaxConcurrency > 0 {
		opts = append(opts, graph.WithMaxConcurrency(cfg.MaxConcurrency))
	}
	if cfg.Checkpointer != nil {
		opts = append(opts, graph.WithCheckpointer(cfg.Checkpointer))
	}
	c, err := g.Compile(opts...)
	if err != nil {
		return nil, fmt.Errorf("workflow: compiling the graph: %w", err)
	}
	w.graph = c
	return w, nil
}

// Plan returns the workflow's plan.
func (w *Workflow) Plan() plan.Plan { return w.def }

// Graph returns the compiled graph, to stream it or to add it to a parent
// graph with graph.AddSubgraph. Give the run its [operator.Env] with [WithEnv].
func (w *Workflow) Graph() *graph.Compiled[State] { return w.graph }

// Stream runs the workflow for query with env as [Workflow.Run] does and
// streams the graph's events (the workflow's reports, [RunStart],
// [StepStart], [StepEnd] and [RunEnd], arrive as custom events); opts
// choose the modes.
func (w *Workflow) Stream(ctx context.Context, query string, env operator.Env, opts ...graph.RunOption) iter.Seq2[graph.Event[State], error] {
	return w.graph.Stream(WithEnv(ctx, env), State{Query: query}, opts...)
}

// Run executes the workflow for query with env. Step failures do not fail
// the run: they are in the result (see [Result.Err]). The error is the
// run's own failure, such as a cancelled ctx; the result then holds the
// steps finished so far. With Config.Checkpointer, ctx names the run's
// thread (graph.WithConfig) and the run is saved as it goes.
func (w *Workflow) Run(ctx context.Context, query string, env operator.Env) (*Result, error) {
	out, err := w.graph.Invoke(WithEnv(ctx, env), State{Query: query})
	return w.Result(out), err
}

// Resume continues the run saved on the thread named in ctx
// (graph.WithConfig), with env; it needs Config.Checkpointer. A run that
// stopped inside a super-step (the process died, ctx was cancelled) goes
// on from its last checkpoint: steps whose outcome was saved do not run
// again. A run that finished runs again the steps that did not succeed,
// and keeps those that did. Use [Workflow.Run] with a new thread for a new
// query: Run on a thread that stopped inside a step fails with
// graph.ErrThreadPaused. opts are the graph's run options, such as
// graph.Resume(answer) for a run paused on a question (see
// [InterruptElicitor]).
//
// A thread with no checkpoint is an error wrapping [ErrNoSavedRun] (and
// [graph.ErrNothingToResume]), and nothing runs.
func (w *Workflow) Resume(ctx context.Context, env operator.Env, opts ...graph.RunOption) (*Result, error) {
	if err := w.checkSaved(ctx); err != nil {
		return nil, err
	}
	out, err := w.graph.Invoke(WithEnv(ctx, env), State{}, opts...)
	return w.Result(out), err
}

// checkSaved refuses a Resume without a checkpointer, or on a thread that
// has no checkpoint (which would otherwise start a run from a zero
// input). A ctx naming no thread is left to the graph's own error.
func (w *runner) checkSaved(ctx context.Context) error {
	if w.cfg.Checkpointer == nil {
		return errors.New("workflow: Resume needs a saved run; set Config.Checkpointer and run with a thread id (graph.WithConfig)")
	}
	thread := graph.ConfigFrom(ctx).ThreadID
	if thread == "" {
		return nil
	}
	// The newest checkpoint's description, not its snapshot: no blobs
	// are read.
	cps, err := w.cfg.Checkpointer.List(ctx, thread, checkpoint.ListOptions{Limit: 1})
	switch {
	case err != nil:
		return fmt.Errorf("workflow: Resume: reading thread %q: %w", thread, err)
	case len(cps) == 0:
		return fmt.Errorf("%w (%w): thread %q has no checkpoint; start it with Run", ErrNoSavedRun, graph.ErrNothingToResume, thread)
	}
	return nil
}

// Result builds the result of a run from its final state.
func (w *Workflow) Result(s State) *Result {
	return newResult(w.def, s.Step)
}

// newResult lists the outcomes of def's steps in plan order.
func newResult(def plan.Plan, step func(id string) (StepResult, bool)) *Result {
	r := &Result{Goal: def.Goal, Steps: make([]StepResult, 0, len(def.Steps))}
	for _, st := range def.Steps {
		if sr, ok := step(st.ID); ok {
			r.Steps = append(r.Steps, sr)
		}
	}
	return r
}

// report streams r as a custom event and gives it to env's Reporter.
func (w *runner) report(ctx context.Context, env operator.Env, r operator.Report) {
	if err := graph.Emit(ctx, r); err != nil {
		w.cfg.Logger.Debug("workflow: streaming a report failed", zap.String("report", fmt.Sprintf("%T", r)), zap.Error(err))
	}
	if env.Reporter != nil {
		if err := env.Reporter.Report(ctx, r); err != nil {
			w.cfg.Logger.Warn("workflow: reporting failed", zap.String("report", fmt.Sprintf("%T", r)), zap.Error(err))
		}
	}
}

func (w *Workflow) created(ctx context.Context, _ State) (graph.Update[State], error) {
	w.report(ctx, w.env(ctx), RunStart{Goal: w.def.Goal, Steps: len(w.def.Steps)})
	return graph.Update[State]{}, nil
}

func (w *Workflow) complete(ctx context.Context, s State) (graph.Update[State], error) {
	w.reportEnd(ctx, s.Steps)
	return graph.Update[State]{}, nil
}

// reportEnd reports a RunEnd with the number of steps that ran (did
// not skip).
func (w *runner) reportEnd(ctx context.Context, steps []StepResult) {
	ran := 0
	for _, r := range steps {
		if r.Status != Skipped {
			ran++
		}
	}
	w.report(ctx, w.env(ctx), RunEnd{Steps: ran})
}

func (w *Workflow) step(i int) graph.NodeFunc[State] {
	st := w.def.Steps[i]
	return func(ctx context.Context, s State) (graph.Update[State], error) {
		prior, _ := s.Step(st.ID)
		res, changed, err := w.runStep(ctx, stepRun{step: st, number: i + 1, inputs: w.inputs[i], query: s.Query, deps: s.Step, prior: prior})
		if err != nil || !changed {
			return graph.Update[State]{}, err
		}
		return StepsField.Set([]StepResult{res}), nil
	}
}

// stepRun is one run of a step: what runStep needs to know.
type stepRun struct {
	step   plan.Step
	number int     // from 1
	inputs []input // the step's parsed input mapping
	query  string  // the user's query
	// deps returns the outcome of a dependency.
	deps func(id string) (StepResult, bool)
	// prior is the step's own outcome from an earlier run, if any (a zero
	// ID when none).
	prior StepResult
}

// runStep runs one step: it skips it when a dependency did not succeed,
// keeps its prior outcome when that succeeded with the same operator,
// query and inputs, and otherwise runs its operator (with the assembled
// context, retries and fallback), reporting a StepStart and a StepEnd,
// and recording the
// outcome in the operator.Env's turn. changed is false when the prior outcome is
// kept. An error is not the step's failure but the run's: the context was
// cancelled, or the operator paused for the user's answer (the step runs
// again on resume).
func (w *runner) runStep(ctx context.Context, sr stepRun) (res StepResult, changed bool, err error) {
	env := w.env(ctx)
	st := sr.step
	res = StepResult{ID: st.ID, Name: st.Name, Operator: st.Operator, Number: sr.number}
	for _, d := range st.DependsOn {
		if dr, _ := sr.deps(d); dr.Status != Succeeded {
			res.Status, res.Err = Skipped, &SkipError{Step: st.ID, Dependency: d, Cause: dr.Err}
			w.report(ctx, env, StepEnd{Step: res.Number, ID: st.ID, Operator: st.Operator, Status: Skipped, Err: res.Err})
			w.record(env, res)
			return res, true, nil
		}
	}
	err = w.resolve(sr, &res)
	if err == nil {
		if done := sr.prior; done.ID == st.ID && done.Status == Succeeded && sameRun(done, res) {
			// Succeeded with these inputs in an earlier run of this
			// state (a thread run again, or a parent passing saved
			// steps back in): keep it.
			w.record(env, done)
			return done, false, nil
		}
	}
	start := time.Now()
	w.report(ctx, env, StepStart{Step: res.Number, ID: st.ID, Name: st.Name, Operator: st.Operator})
	var action memory.ActionID
	if env.Turn != nil {
		action = env.Turn.Actions.Begin(ActionKind, st.Operator, st.ID+": "+st.Name)
	}
	var r *operator.Result
	if err == nil {
		r, err = w.execute(ctx, env, st, res)
	}
	res.Duration = time.Since(start)
	if env.Turn != nil {
		_ = env.Turn.Actions.Finish(action, err)
	}
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, operator.ErrPaused) {
			// Not the step's failure: the run stops, or pauses for
			// the user's answer, and the step runs again on resume.
			return StepResult{}, false, err
		}
		res.Status, res.Err = Failed, err
	} else {
		res.Status, res.Result, res.Output = Succeeded, r, r.Output
	}
	w.report(ctx, env, StepEnd{Step: res.Number, ID: st.ID, Operator: st.Operator, Status: res.Status, Err: res.Err})
	w.record(env, res)
	return res, true, nil
}

// resolve fills res.Inputs and res.Query from the dependencies' outputs.
func (w *runner) resolve(sr stepRun, res *StepResult) error {
	st := sr.step
	r := resolver{query: sr.query, outputs: make(map[string]any, len(st.DependsOn)), maxBytes: w.cfg.MaxInputBytes}
	for _, d := range st.DependsOn {
		dr, _ := sr.deps(d)
		r.outputs[d] = dr.Output
	}
	var inputs map[string]any
	if len(sr.inputs) > 0 {
		inputs = make(map[string]any, len(sr.inputs))
	}
	for _, in := range sr.inputs {
		v, err := in.resolve(&r)
		if err != nil {
			return fmt.Errorf("workflow: step %s: input %s: %w", st.ID, in.name, err)
		}
		inputs[in.name] = v
	}
	res.Inputs, res.Query = inputs, sr.query
	if q, ok := inputs["query"].(string); ok {
		res.Query = q
	}
	return nil
}

// sameRun reports whether done, a step's earlier outcome, ran with the
// operator, query and inputs res now has. Inputs are compared in their
// JSON form, the form a checkpoint restores them from.
func sameRun(done, res StepResult) bool {
	if done.Operator != res.Operator || done.Query != res.Query {
		return false
	}
	if len(done.Inputs) == 0 && len(res.Inputs) == 0 {
		return true
	}
	a, errA := json.Marshal(done.Inputs)
	b, errB := json.Marshal(res.Inputs)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

func (w *runner) execute(ctx context.Context, env operator.Env, st plan.Step, res StepResult) (*operator.Result, error) {
	query, inputs := res.Query, res.Inputs
	oc := &operator.Context{Query: query, Params: inputs, Tools: env.Tools, Turn: env.Turn,
		Messenger: operator.NewMessenger(operator.Metadata{Name: st.Operator}, env.Reporter, env.Elicitor)}
	if w.cfg.Assembler != nil {
		if meta, ok := w.cfg.Operators.Lookup(st.Operator); ok && len(meta.ContextRequirements) > 0 {
			turn := env.Turn
			if turn == nil {
				turn = memory.NewTurn("", query)
			}
			a, err := w.cfg.Assembler.Assemble(ctx, turn, meta.ContextRequirements...)
			if err != nil {
				return nil, fmt.Errorf("workflow: step %s: assembling context: %w", st.ID, err)
			}
			oc.Assembled = a
		}
	}
	r, _, err := w.cfg.Operators.Execute(ctx, st.Operator, oc)
	return r, err
}

func (w *runner) record(env operator.Env, r StepResult) {
	if env.Turn == nil {
		return
	}
	if err := env.Turn.Results.Put(memory.Result{ID: r.ID, Name: r.Name, Output: r.Output, Err: r.Err}); err != nil {
		w.cfg.Logger.Warn("workflow: recording a step result failed", zap.String("step", r.ID), zap.Error(err))
	}
}

// Result is the outcome of a workflow run.
type Result struct {
	Goal string
	// Steps holds the outcome of every step that finished (all of them,
	// after a complete run), in plan order.
	Steps []StepResult
}

// Step returns the outcome of the step with the given id.
func (r *Result) Step(id string) (StepResult, bool) {
	for _, s := range r.Steps {
		if s.ID == id {
			return s, true
		}
	}
	return StepResult{}, false
}

// IDs returns the ids of the steps with the given status, in definition
// order.
func (r *Result) IDs(st Status) []string {
	var ids []string
	for _, s := range r.Steps {
		if s.Status == st {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// Succeeded reports whether every step succeeded.
func (r *Result) Succeeded() bool {
	for _, s := range r.Steps {
		if s.Status != Succeeded {
			return false
		}
	}
	return true
}

// Err joins the errors of the failed and skipped steps, or returns nil.
func (r *Result) Err() error {
	var errs []error
	for _, s := range r.Steps {
		if s.Err != nil {
			errs = append(errs, s.Err)
		}
	}
	return errors.Join(errs...)
}
