package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/plan"
	"github.com/agentgraph/agentgraph/operator/workflow"
	"github.com/google/go-cmp/cmp"
)

// This file holds the helpers the package's tests share: the seed's
// pricing plan and its operators, event recording, parent graphs that run
// a workflow as a subgraph, and checkpoint stores.

// pricing is the plan of "Compare our pricing to competitors", as a model
// writes it.
const pricing = "Here is the plan:\n```json\n" + `{
  "goal": "Compare our pricing to competitors",
  "steps": [
    {"id": "step_1", "name": "Rewrite Query", "operator": "query_rewriter",
     "input_mapping": {"query": "{{user_query}}"}, "depends_on": []},
    {"id": "step_2", "name": "Search Internal Docs", "operator": "rag_retriever",
     "input_mapping": {"query": "{{step_1.internal_query}}"}, "depends_on": ["step_1"]},
    {"id": "step_3", "name": "Search Web", "operator": "web_searcher",
     "input_mapping": {"query": "{{step_1.external_query}}"}, "depends_on": ["step_1"]},
    {"id": "step_4", "name": "Synthesize", "operator": "synthesizer",
     "input_mapping": {"sources": ["{{step_2.results}}", "{{step_3.results}}"]},
     "depends_on": ["step_2", "step_3"]}
  ]
}` + "\n```"

func parsePricing(t *testing.T) plan.Plan {
	t.Helper()
	def, err := plan.Parse([]byte(pricing))
	if err != nil {
		t.Fatal(err)
	}
	return def
}

func newWorkflow(t *testing.T, def plan.Plan, cfg workflow.Config) *workflow.Workflow {
	t.Helper()
	wf, err := workflow.Compile(def, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

func newExecutor(t *testing.T, cfg workflow.Config) *workflow.Executor {
	t.Helper()
	x, err := workflow.NewExecutor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func mustRegister(t testing.TB, r *operator.Registry, name string, f operator.Func) {
	t.Helper()
	err := r.Register(operator.Metadata{Name: name, Description: "test operator " + name, Type: operator.PureLLM},
		func(operator.Deps) (operator.Operator, error) { return f, nil })
	if err != nil {
		t.Fatal(err)
	}
}

// barrier returns a function that blocks until n callers have called it,
// or fails after a second: it proves that n steps ran at the same time.
func barrier(n int) func(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(n)
	return func(ctx context.Context) error {
		wg.Done()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
			return nil
		case <-time.After(30 * time.Second):
			return errors.New("the parallel steps did not run concurrently")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func pricingOperators(t *testing.T) *operator.Registry {
	reg := operator.NewRegistry(operator.Deps{})
	both := barrier(2)
	mustRegister(t, reg, "query_rewriter", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: map[string]any{
			"internal_query": "our pricing tiers " + oc.Query,
			"external_query": "competitor pricing " + oc.Query,
		}}, nil
	})
	search := func(where string) operator.Func {
		return func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
			if err := both(ctx); err != nil {
				return nil, err
			}
			return &operator.Result{Output: map[string]any{"results": where + ": " + oc.Query}}, nil
		}
	}
	mustRegister(t, reg, "rag_retriever", search("docs"))
	mustRegister(t, reg, "web_searcher", search("web"))
	mustRegister(t, reg, "synthesizer", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		var parts []string
		for _, s := range oc.Params["sources"].([]any) {
			parts = append(parts, s.(string))
		}
		return &operator.Result{Output: strings.Join(parts, " | ")}, nil
	})
	return reg
}

// okFailOperators registers "ok", whose output is "ok:" and its query,
// and "fail", which fails with boom.
func okFailOperators(t *testing.T, boom error) *operator.Registry {
	reg := operator.NewRegistry(operator.Deps{})
	mustRegister(t, reg, "ok", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: "ok:" + oc.Query}, nil
	})
	mustRegister(t, reg, "fail", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return nil, boom
	})
	return reg
}

// recordQueries registers name, an operator whose output is its query,
// and returns a function giving the queries it got, in the order of the
// calls.
func recordQueries(t *testing.T, reg *operator.Registry, name string) (order func() []string) {
	var mu sync.Mutex
	var queries []string
	mustRegister(t, reg, name, func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		mu.Lock()
		queries = append(queries, oc.Query)
		mu.Unlock()
		return &operator.Result{Output: oc.Query}, nil
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(queries)
	}
}

// peak tracks how many calls run at once, and the most that ever did.
type peak struct {
	running, max atomic.Int32
}

func (p *peak) enter() {
	n := p.running.Add(1)
	for {
		m := p.max.Load()
		if n <= m || p.max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (p *peak) leave() { p.running.Add(-1) }

// recorder is a Reporter that keeps what it receives.
type recorder struct {
	mu      sync.Mutex
	reports []operator.Report
}

func newRecorder() *recorder { return &recorder{} }

func (r *recorder) Report(_ context.Context, rep operator.Report) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, rep)
	return nil
}

// line renders a report as the seed's SSE example shows its event.
func line(r operator.Report) string {
	switch p := r.(type) {
	case workflow.RunStart:
		return fmt.Sprintf("workflow.created steps=%d", p.Steps)
	case workflow.StepStart:
		return fmt.Sprintf("workflow.step.start step=%d name=%s", p.Step, p.Name)
	case workflow.StepEnd:
		if p.Status != workflow.Succeeded {
			return fmt.Sprintf("workflow.step.complete step=%d status=%s", p.Step, p.Status)
		}
		return fmt.Sprintf("workflow.step.complete step=%d", p.Step)
	case workflow.RunEnd:
		return fmt.Sprintf("workflow.complete steps=%d", p.Steps)
	case operator.ToolStart:
		return fmt.Sprintf("tool.start tool=%s", p.Tool)
	case operator.ToolComplete:
		return fmt.Sprintf("tool.complete tool=%s", p.Tool)
	case operator.ToolFailed:
		return fmt.Sprintf("tool.error tool=%s", p.Tool)
	}
	return fmt.Sprintf("%T", r)
}

// drain returns the lines of what r received so far.
func drain(t *testing.T, r *recorder) []string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.reports))
	for i, rep := range r.reports {
		out[i] = line(rep)
	}
	return out
}

// checkPricingEvents drains em and checks that it holds the events of a
// whole run of the pricing plan, in the seed's order.
func checkPricingEvents(t *testing.T, em *recorder) {
	t.Helper()
	var got []string
	for _, l := range drain(t, em) {
		if !strings.HasPrefix(l, "tool.") { // the steps' tools, checked by the callers that have them
			got = append(got, l)
		}
	}
	// Steps 2 and 3 ran at the same time (the barrier), so both started
	// before either completed; their relative order is the scheduler's.
	if len(got) == 10 {
		slices.Sort(got[3:5])
		slices.Sort(got[5:7])
	}
	want := []string{
		"workflow.created steps=4",
		"workflow.step.start step=1 name=Rewrite Query",
		"workflow.step.complete step=1",
		"workflow.step.start step=2 name=Search Internal Docs",
		"workflow.step.start step=3 name=Search Web",
		"workflow.step.complete step=2",
		"workflow.step.complete step=3",
		"workflow.step.start step=4 name=Synthesize",
		"workflow.step.complete step=4",
		"workflow.complete steps=4",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// resumedPricingEvents are the events of a pricing run resumed after
// step_1 and step_3 finished.
var resumedPricingEvents = []string{
	"workflow.step.start step=2 name=Search Internal Docs",
	"workflow.step.complete step=2",
	"workflow.step.start step=4 name=Synthesize",
	"workflow.step.complete step=4",
	"workflow.complete steps=4",
}

// Research is the state of a parent graph that runs the pricing workflow
// as its "research" node and answers from its last step.
type Research struct {
	Query  string
	Steps  []workflow.StepResult
	Answer string
}

var (
	researchSteps  = graph.Replace(func(r *Research) *[]workflow.StepResult { return &r.Steps })
	researchAnswer = graph.Replace(func(r *Research) *string { return &r.Answer })
)

// researchGraph compiles a parent graph with saver: START -> research (the
// pricing workflow as a subgraph, given the steps saved in the parent's
// state) -> answer -> END.
func researchGraph(t *testing.T, wf *workflow.Workflow, saver checkpoint.Saver) *graph.Compiled[Research] {
	t.Helper()
	g := graph.New[Research]()
	graph.AddSubgraph(g, "research", wf.Graph(),
		func(r Research) workflow.State { return workflow.State{Query: r.Query, Steps: r.Steps} },
		func(s workflow.State) graph.Update[Research] { return researchSteps.Set(s.Steps) })
	g.AddNode("answer", func(_ context.Context, r Research) (graph.Update[Research], error) {
		for _, s := range r.Steps {
			if s.ID == "step_4" && s.Status == workflow.Succeeded {
				return researchAnswer.Set(fmt.Sprint(s.Output)), nil
			}
		}
		return researchAnswer.Set("incomplete"), nil
	})
	g.AddEdge(graph.START, "research").AddEdge("research", "answer").AddEdge("answer", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// executorGraph compiles a parent graph, START -> research -> END, whose
// research node runs def on the executor x as a subgraph and keeps its
// step results.
func executorGraph(t *testing.T, x *workflow.Executor, def plan.Plan, opts ...graph.CompileOption) *graph.Compiled[Research] {
	t.Helper()
	g := graph.New[Research]()
	graph.AddSubgraph(g, "research", x.Graph(),
		func(r Research) workflow.ExecState { return workflow.ExecState{Query: r.Query, Plan: def} },
		func(s workflow.ExecState) graph.Update[Research] { return researchSteps.Set(s.Result().Steps) })
	g.AddEdge(graph.START, "research").AddEdge("research", graph.END)
	app, err := g.Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// calls counts operator executions by operator name.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) add(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[op]++
	return c.n[op]
}

func (c *calls) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// countedPricing registers the pricing plan's operators, counting their
// calls; failFirst, when set, is called before the named operator's work
// and may fail it.
func countedPricing(t *testing.T, c *calls, failFirst map[string]func(ctx context.Context, call int) error) *operator.Registry {
	reg := operator.NewRegistry(operator.Deps{})
	wrap := func(name string, f operator.Func) {
		mustRegister(t, reg, name, func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
			n := c.add(name)
			if fail := failFirst[name]; fail != nil {
				if err := fail(ctx, n); err != nil {
					return nil, err
				}
			}
			return f(ctx, oc)
		})
	}
	wrap("query_rewriter", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: map[string]any{
			"internal_query": "our pricing tiers " + oc.Query,
			"external_query": "competitor pricing " + oc.Query,
		}}, nil
	})
	for _, s := range []struct{ op, where string }{{"rag_retriever", "docs"}, {"web_searcher", "web"}} {
		wrap(s.op, func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
			return &operator.Result{Output: map[string]any{"results": s.where + ": " + oc.Query}}, nil
		})
	}
	wrap("synthesizer", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		var parts []string
		for _, s := range oc.Params["sources"].([]any) {
			parts = append(parts, s.(string))
		}
		return &operator.Result{Output: strings.Join(parts, " | ")}, nil
	})
	return reg
}

// failFirstCall returns a countedPricing failFirst function that fails
// the operator's first call with err.
func failFirstCall(err error) func(context.Context, int) error {
	return func(_ context.Context, call int) error {
		if call == 1 {
			return err
		}
		return nil
	}
}

// cancelFirstCall returns a countedPricing failFirst function that, on
// the operator's first call, waits until saved (when not nil) has saved
// its mark, then cancels the run and fails with the cancellation.
func cancelFirstCall(cancel context.CancelFunc, saved *signalSaver) func(context.Context, int) error {
	return func(ctx context.Context, call int) error {
		if call != 1 {
			return nil
		}
		if saved != nil {
			select {
			case <-saved.saved:
			case <-time.After(30 * time.Second):
				return fmt.Errorf("no write holding %s was ever saved", saved.mark)
			}
		}
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
}

// registerPublisher registers "publisher", an operator that counts its
// calls in c, asks question through its Messenger and outputs what
// output makes of the answer and its query.
func registerPublisher(t *testing.T, reg *operator.Registry, c *calls, question string, output func(ok bool, query string) string) {
	t.Helper()
	err := reg.Register(operator.Metadata{Name: "publisher", Description: "Publishes after asking", Type: operator.PureLLM,
		Capabilities: operator.Capabilities{Elicitation: true}},
		func(operator.Deps) (operator.Operator, error) {
			return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				c.add("publisher")
				ok, err := oc.Messenger.Confirm(ctx, question)
				if err != nil {
					return nil, err
				}
				return &operator.Result{Output: output(ok, oc.Query)}, nil
			}), nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

// signalSaver closes saved once it has saved pending writes holding mark.
type signalSaver struct {
	checkpoint.Saver
	mark  string
	once  sync.Once
	saved chan struct{}
}

func (s *signalSaver) PutWrites(ctx context.Context, thread, id string, writes []checkpoint.Write) error {
	if err := s.Saver.PutWrites(ctx, thread, id, writes); err != nil {
		return err
	}
	for _, w := range writes {
		if strings.Contains(string(w.Value), s.mark) {
			s.once.Do(func() { close(s.saved) })
		}
	}
	return nil
}

// savers returns a fresh checkpoint store per backend, and a function that
// reopens it as a restarted process would.
func savers(t *testing.T) map[string]func() (open func() checkpoint.Saver) {
	return map[string]func() func() checkpoint.Saver{
		"memory": func() func() checkpoint.Saver {
			m := checkpoint.NewMemory()
			return func() checkpoint.Saver { return m }
		},
		"sqlite": func() func() checkpoint.Saver {
			path := filepath.Join(t.TempDir(), "checkpoints.db")
			return func() checkpoint.Saver {
				s, err := sqlite.New(context.Background(), sqlite.Config{Path: path})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		},
	}
}

// outcome is what a test compares of a step result: its JSON form keeps
// the message of an error, not its Go type.
type outcome struct {
	ID, Status, Output, Err string
}

func outcomes(steps []workflow.StepResult) []outcome {
	var out []outcome
	for _, s := range steps {
		o := outcome{ID: s.ID, Status: string(s.Status), Output: operator.Text(s.Output)}
		if s.Err != nil {
			o.Err = s.Err.Error()
		}
		out = append(out, o)
	}
	return out
}

func outcomeIDs(steps []workflow.StepResult) []string {
	var ids []string
	for _, s := range steps {
		ids = append(ids, s.ID)
	}
	return ids
}
