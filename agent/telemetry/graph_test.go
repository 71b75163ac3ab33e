package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentgraph/agentgraph/agent/telemetry"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/resilience"
)

// tree indexes finished spans by name and by parent, to assert their
// nesting.
type tree struct {
	t     *testing.T
	spans []sdktrace.ReadOnlySpan
}

func newTree(t *testing.T, exp *tracetest.InMemoryExporter) tree {
	t.Helper()
	return tree{t: t, spans: exp.GetSpans().Snapshots()}
}

// named returns the spans called name, in the order they ended.
func (tr tree) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tr.spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// one returns the only span called name whose attributes include attrs.
func (tr tree) one(name string, attrs ...attribute.KeyValue) sdktrace.ReadOnlySpan {
	tr.t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range tr.named(name) {
		if hasAll(s, attrs) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		tr.t.Fatalf("%d spans %q with %v, want 1; spans: %v", len(found), name, attrs, tr.describe())
	}
	return found[0]
}

func hasAll(s sdktrace.ReadOnlySpan, attrs []attribute.KeyValue) bool {
	for _, want := range attrs {
		v, ok := attr(s, string(want.Key))
		if !ok || v.Emit() != want.Value.Emit() {
			return false
		}
	}
	return true
}

// children returns the spans whose parent is p.
func (tr tree) children(p sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range tr.spans {
		if s.Parent().SpanID() == p.SpanContext().SpanID() && s.SpanContext().TraceID() == p.SpanContext().TraceID() {
			out = append(out, s.Name())
		}
	}
	slices.Sort(out)
	return out
}

func (tr tree) wantParent(child, parent sdktrace.ReadOnlySpan) {
	tr.t.Helper()
	if child.Parent().SpanID() != parent.SpanContext().SpanID() || child.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		tr.t.Errorf("span %q is not a child of %q", child.Name(), parent.Name())
	}
}

func (tr tree) describe() string {
	var b strings.Builder
	for _, s := range tr.spans {
		b.WriteString("\n  " + s.Name() + " " + s.SpanContext().SpanID().String() + " <- " + s.Parent().SpanID().String())
	}
	return b.String()
}

func events(s sdktrace.ReadOnlySpan, name string) []sdktrace.Event {
	var out []sdktrace.Event
	for _, e := range s.Events() {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

func wantString(t *testing.T, s sdktrace.ReadOnlySpan, key, want string) {
	t.Helper()
	v, ok := attr(s, key)
	if !ok || v.AsString() != want {
		t.Errorf("span %q: %s = %q (present %v), want %q", s.Name(), key, v.Emit(), ok, want)
	}
}

type trip struct {
	Log      []string
	Approved string
}

var (
	tripLog      = graph.Append(func(s *trip) *[]string { return &s.Log })
	tripApproved = graph.Replace(func(s *trip) *string { return &s.Approved })
)

// The span tree of a durable run with a subgraph, two parallel tasks, a
// retried node and an interrupt, then of the run that resumes it:
//
//	run trip (thread, run id, outcome interrupted, 3 steps, interrupt event)
//	  step 1: node plan
//	  step 2: node research (a subgraph) -> run research -> step -> node search
//	          node flaky (attempt 1 failed, attempt 2)
//	  step 3: node review (interrupt event, not an error)
//	  checkpoint save spans (backend checkpoint.Memory, bytes)
//	run trip (resume event, outcome completed, 1 step): step 3: node review
func TestRunSpanTree(t *testing.T) {
	tel, exp, reader := newTelemetry(t, false)

	child := graph.New[trip]()
	child.AddNode("search", func(ctx context.Context, s trip) (graph.Update[trip], error) {
		return tripLog.Set([]string{"searched"}), nil
	})
	child.AddEdge(graph.START, "search").AddEdge("search", graph.END)
	research, err := child.Compile(graph.WithName("research"))
	if err != nil {
		t.Fatal(err)
	}

	tries := 0
	g := graph.New[trip]()
	g.AddNode("plan", func(ctx context.Context, s trip) (graph.Update[trip], error) {
		return tripLog.Set([]string{"planned"}), nil
	})
	graph.AddSubgraph(g, "research", research,
		func(s trip) trip { return trip{} },
		func(c trip) graph.Update[trip] { return tripLog.Set(c.Log) })
	g.AddNode("flaky", func(ctx context.Context, s trip) (graph.Update[trip], error) {
		if tries++; tries == 1 {
			return graph.Update[trip]{}, errors.New("booking service unavailable")
		}
		return tripLog.Set([]string{"booked"}), nil
	}, graph.Retry(graph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Millisecond}))
	g.AddNode("review", func(ctx context.Context, s trip) (graph.Update[trip], error) {
		ok, err := graph.Interrupt[string](ctx, "approve the trip?")
		if err != nil {
			return graph.Update[trip]{}, err
		}
		return tripApproved.Set(ok), nil
	})
	g.AddEdge(graph.START, "plan").
		AddEdge("plan", "research").AddEdge("plan", "flaky").
		AddEdge("research", "review").AddEdge("flaky", "review").
		AddEdge("review", graph.END)
	app, err := g.Compile(graph.WithName("trip"), graph.WithCheckpointer(checkpoint.NewMemory()),
		graph.WithHooks(tel.Hooks()))
	if err != nil {
		t.Fatal(err)
	}
	thread := app.Thread("trip-1")
	ctx := graph.WithConfig(context.Background(), graph.RunConfig{RunID: "run-1"})
	_, err = thread.Invoke(ctx, trip{})
	if !errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("first run: %v, want a pause", err)
	}

	tr := newTree(t, exp)
	run := tr.one("run trip")
	if run.Parent().IsValid() {
		t.Errorf("the run span has a parent")
	}
	wantString(t, run, "agentgraph.graph", "trip")
	wantString(t, run, "agentgraph.thread.id", "trip-1")
	wantString(t, run, "agentgraph.run.id", "run-1")
	wantString(t, run, "agentgraph.run.outcome", telemetry.OutcomeInterrupted)
	wantInt(t, run, "agentgraph.run.steps", 3)
	if ev := events(run, "agentgraph.interrupt"); len(ev) != 1 || !hasAll(eventSpan(ev[0]), []attribute.KeyValue{attribute.String("agentgraph.node", "review")}) {
		t.Errorf("run span's interrupt events: %v", ev)
	}
	if run.Status().Code == codes.Error {
		t.Errorf("a paused run is marked failed: %v", run.Status())
	}

	steps := map[int64]sdktrace.ReadOnlySpan{}
	for _, s := range tr.named("step") {
		if s.Parent().SpanID() == run.SpanContext().SpanID() {
			v, _ := attr(s, "agentgraph.step")
			steps[v.AsInt64()] = s
		}
	}
	if len(steps) != 3 {
		t.Fatalf("run has %d step spans, want 3:%s", len(steps), tr.describe())
	}
	if got := tr.children(steps[1]); !slices.Equal(got, []string{"checkpoint save", "node plan"}) {
		t.Errorf("step 1 has %v", got)
	}
	if v, _ := attr(steps[2], "agentgraph.step.nodes"); !slices.Equal(v.AsStringSlice(), []string{"research", "flaky"}) {
		t.Errorf("step 2's nodes = %v, want [research flaky]", v.AsStringSlice())
	}
	// The parallel step: the subgraph node and both attempts of the
	// retried node, each with the step's writes saved as they finish.
	if got := tr.children(steps[2]); !slices.Equal(got, []string{"checkpoint save", "checkpoint save", "checkpoint save", "node flaky", "node flaky", "node research"}) {
		t.Errorf("step 2 has %v", got)
	}
	failed := tr.one("node flaky", attribute.Int("agentgraph.task.attempt", 1))
	if failed.Status().Code != codes.Error || len(events(failed, "exception")) != 1 {
		t.Errorf("first attempt of flaky: status %v, events %v", failed.Status(), failed.Events())
	}
	if ok := tr.one("node flaky", attribute.Int("agentgraph.task.attempt", 2)); ok.Status().Code == codes.Error {
		t.Errorf("second attempt of flaky failed: %v", ok.Status())
	}
	// The subgraph's run nests under its node, and its nodes carry the
	// namespace.
	node := tr.one("node research")
	sub := tr.one("run research")
	tr.wantParent(sub, node)
	wantString(t, sub, "agentgraph.namespace", "research")
	subStep := tr.one("step", attribute.String("agentgraph.namespace", "research"))
	tr.wantParent(subStep, sub)
	search := tr.one("node search")
	wantString(t, search, "agentgraph.namespace", "research")
	tr.wantParent(search, subStep)
	if got := tr.children(sub); !slices.Equal(got, []string{"step"}) {
		t.Errorf("the subgraph's run has %v", got)
	}
	review := tr.one("node review")
	tr.wantParent(review, steps[3])
	if review.Status().Code == codes.Error || len(events(review, "agentgraph.interrupt")) != 1 {
		t.Errorf("the paused node: status %v, events %v; want an interrupt event, no error", review.Status(), review.Events())
	}
	// Checkpoints: the input one under the run, one per completed step
	// under its step, the pause under step 3.
	// The input checkpoint (an empty state) under the run, one per
	// completed step under its step with the writes of step 2's tasks as
	// they finished, and the pause (nothing new to store) under step 3.
	var saves []string
	for _, s := range tr.named("checkpoint save") {
		wantString(t, s, "agentgraph.checkpoint.backend", "checkpoint.Memory")
		wantString(t, s, "agentgraph.thread.id", "trip-1")
		v, _ := attr(s, "agentgraph.checkpoint.bytes")
		st, _ := attr(s, "agentgraph.step")
		w, _ := attr(s, "agentgraph.checkpoint.writes")
		kind := "checkpoint"
		if w.AsBool() {
			kind = "writes"
		}
		saves = append(saves, fmt.Sprintf("%d %s %v", st.AsInt64(), kind, v.AsInt64() > 0))
	}
	slices.Sort(saves)
	if want := []string{"0 checkpoint false", "1 checkpoint true", "2 checkpoint false", "2 checkpoint true", "2 writes true", "2 writes true"}; !slices.Equal(saves, want) {
		t.Errorf("checkpoint saves (step, kind, bytes > 0) = %q, want %q", saves, want)
	}
	if got := tr.children(steps[3]); !slices.Equal(got, []string{"checkpoint save", "node review"}) {
		t.Errorf("step 3 has %v", got)
	}
	for _, s := range tr.spans {
		if s.SpanContext().TraceID() != run.SpanContext().TraceID() {
			t.Errorf("span %q is in another trace", s.Name())
		}
	}

	// The resume: a new run of the thread, resuming step 3.
	exp.Reset()
	if _, err := thread.Invoke(ctx, trip{}, graph.Resume("yes")); err != nil {
		t.Fatal(err)
	}
	tr = newTree(t, exp)
	run = tr.one("run trip")
	if len(events(run, "agentgraph.resume")) != 1 {
		t.Errorf("resumed run's events: %v", run.Events())
	}
	wantString(t, run, "agentgraph.run.outcome", telemetry.OutcomeCompleted)
	wantInt(t, run, "agentgraph.run.steps", 1)
	review = tr.one("node review")
	wantInt(t, review, "agentgraph.step", 3)
	if review.Status().Code == codes.Error || len(review.Events()) != 0 {
		t.Errorf("resumed node: status %v, events %v", review.Status(), review.Events())
	}

	// Metrics: two runs of trip, one interrupted, one completed, none
	// active; the subgraph's run is part of its parent's.
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]uint64{}
	for _, dp := range histogram(t, rm, "agentgraph.run.duration").DataPoints {
		g, _ := dp.Attributes.Value("agentgraph.graph")
		o, _ := dp.Attributes.Value("agentgraph.run.outcome")
		outcomes[g.AsString()+"/"+o.AsString()] += dp.Count
	}
	if want := map[string]uint64{"trip/interrupted": 1, "trip/completed": 1}; !mapsEqual(outcomes, want) {
		t.Errorf("run durations by graph/outcome = %v, want %v", outcomes, want)
	}
	active := sum(t, rm, "agentgraph.run.active")
	if len(active.DataPoints) != 1 || active.DataPoints[0].Value != 0 || active.IsMonotonic {
		t.Errorf("active runs = %+v, want one non-monotonic point at 0", active.DataPoints)
	}
}

func eventSpan(e sdktrace.Event) sdktrace.ReadOnlySpan {
	return attrsSpan{attrs: e.Attributes}
}

// attrsSpan lets attr and hasAll read an event's attributes.
type attrsSpan struct {
	sdktrace.ReadOnlySpan
	attrs []attribute.KeyValue
}

func (a attrsSpan) Attributes() []attribute.KeyValue { return a.attrs }

func mapsEqual(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func findMetric(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Metrics {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m
			}
		}
	}
	t.Fatalf("no metric %q", name)
	return metricdata.Metrics{}
}

func histogram(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Histogram[float64] {
	t.Helper()
	h, ok := findMetric(t, rm, name).Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("metric %q is not a float histogram", name)
	}
	return h
}

func sum(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Sum[int64] {
	t.Helper()
	s, ok := findMetric(t, rm, name).Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("metric %q is not an int sum", name)
	}
	return s
}

// A run that fails is a failed run span, step span and node span, and
// counts as a failed run.
func TestFailedRunSpan(t *testing.T) {
	tel, exp, _ := newTelemetry(t, false)
	g := graph.New[trip]()
	g.AddNode("boom", func(ctx context.Context, s trip) (graph.Update[trip], error) {
		return graph.Update[trip]{}, errors.New("boom")
	})
	g.AddEdge(graph.START, "boom").AddEdge("boom", graph.END)
	app, err := g.Compile(graph.WithHooks(tel.Hooks()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Invoke(context.Background(), trip{}); err == nil {
		t.Fatal("the run did not fail")
	}
	tr := newTree(t, exp)
	run := tr.one("run graph")
	wantString(t, run, "agentgraph.run.outcome", telemetry.OutcomeFailed)
	for _, s := range tr.spans {
		if s.Status().Code != codes.Error {
			t.Errorf("span %q: status %v, want an error", s.Name(), s.Status())
		}
	}
	if _, ok := attr(run, "agentgraph.thread.id"); ok {
		t.Errorf("a run without a thread has a thread id")
	}
}

// Breaker state changes count by breaker and state.
func TestBreakerObserver(t *testing.T) {
	tel, _, reader := newTelemetry(t, false)
	p, err := resilience.New[int](resilience.Config{Name: "llm:test",
		Breaker: resilience.BreakerConfig{FailureThreshold: 1, RecoveryTime: time.Hour, OnStateChange: tel.BreakerObserver("llm:test")}})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = p.Do(context.Background(), func(context.Context) (int, error) { return 0, errors.New("down") })
	if st := p.Breaker(); st.State != resilience.BreakerOpen {
		t.Fatalf("breaker is %v, want open", st.State)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	s := sum(t, rm, "agentgraph.breaker.state_changes")
	if len(s.DataPoints) != 1 || s.DataPoints[0].Value != 1 {
		t.Fatalf("breaker state changes: %+v", s.DataPoints)
	}
	a := s.DataPoints[0].Attributes
	if v, _ := a.Value("agentgraph.breaker"); v.AsString() != "llm:test" {
		t.Errorf("breaker = %q", v.AsString())
	}
	if v, _ := a.Value("agentgraph.breaker.state"); v.AsString() != "open" {
		t.Errorf("state = %q, want open", v.AsString())
	}
	var noMetrics *telemetry.Telemetry
	if noMetrics.BreakerObserver("x") != nil {
		t.Error("nil Telemetry returned an observer")
	}
}

var _ = sdkmetric.NewManualReader
