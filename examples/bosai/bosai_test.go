package bosai_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/bosai"
	"github.com/agentgraph/agentgraph/examples/internal/mermaidtest"
	"github.com/agentgraph/agentgraph/resilience"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// hookModel answers like the offline model, after calling before with the
// prompt; before's error fails the call. It records every prompt.
type hookModel struct {
	inner  model.Model
	before func(ctx context.Context, prompt string) error

	mu      sync.Mutex
	prompts []string
}

func (m *hookModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	prompt := lastUser(req)
	m.mu.Lock()
	m.prompts = append(m.prompts, prompt)
	m.mu.Unlock()
	if m.before != nil {
		if err := m.before(ctx, prompt); err != nil {
			return nil, err
		}
	}
	return m.inner.Generate(ctx, req)
}

func (m *hookModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return streamOf(ctx, req, m.Generate)
}

// lastUser returns the text of the request's last user message.
func lastUser(req *model.Request) string {
	prompt := ""
	for _, msg := range req.Messages {
		if msg.Role == model.RoleUser {
			prompt = msg.Text()
		}
	}
	return prompt
}

// answer is a complete reply holding text.
func answer(text string) *model.Response {
	return &model.Response{Message: model.Assistant(text), FinishReason: model.FinishStop}
}

// streamOf streams the reply of generate as one text chunk, then the
// complete response.
func streamOf(ctx context.Context, req *model.Request,
	generate func(context.Context, *model.Request) (*model.Response, error)) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := generate(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if t := resp.Text(); t != "" && !yield(model.Chunk{Kind: model.ChunkText, Text: t}, nil) {
			return
		}
		yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, nil)
	}
}

func (m *hookModel) prompt(marker string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.prompts {
		if strings.HasPrefix(p, marker) {
			return p
		}
	}
	return ""
}

// newBot returns a Bot on m with the model client's retries off, closed
// at the end of the test.
func newBot(t *testing.T, m model.Model, cfg bosai.Config) *bosai.Bot {
	t.Helper()
	c, err := agent.New(agent.Config{Model: m, Resilience: &resilience.Config{}, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model = c
	bot, err := bosai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := bot.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return bot
}

// barrier lets n parties through once all n arrived. A party that waits
// longer than guard fails: the parties did not run at the same time.
type barrier struct {
	n       int
	guard   time.Duration
	arrived atomic.Int32
	all     chan struct{}
}

func newBarrier(n int, guard time.Duration) *barrier {
	return &barrier{n: n, guard: guard, all: make(chan struct{})}
}

func (b *barrier) wait(ctx context.Context) error {
	if int(b.arrived.Add(1)) == b.n {
		close(b.all)
	}
	t := time.NewTimer(b.guard)
	defer t.Stop()
	select {
	case <-b.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("barrier: %d of %d agents arrived; they are not running concurrently", b.arrived.Load(), b.n)
	}
}

func agentPrompt(p string) bool {
	return strings.HasPrefix(p, bosai.MarkerSQL) || strings.HasPrefix(p, bosai.MarkerAPI) || strings.HasPrefix(p, bosai.MarkerComputation)
}

const twoAgents = "How many customers are there per country, and what is 12 * 49?"

// TestAgentsRunConcurrently plans two agents, holds each inside its model
// call until both are there, and checks that the composer used both
// results.
func TestAgentsRunConcurrently(t *testing.T) {
	b := newBarrier(2, 30*time.Second)
	m := &hookModel{inner: bosai.NewOfflineModel(), before: func(ctx context.Context, p string) error {
		if agentPrompt(p) {
			return b.wait(ctx)
		}
		return nil
	}}
	bot := newBot(t, m, bosai.Config{})
	resp, err := bot.Ask(context.Background(), bosai.Request{Question: twoAgents})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]bosai.AgentName{bosai.AgentSQL, bosai.AgentComputation}, resp.Plan.Agents); diff != "" {
		t.Fatalf("plan (-want +got):\n%s", diff)
	}
	for _, r := range resp.Results {
		if r.Status != bosai.StatusSucceeded {
			t.Errorf("%s: %s: %v", r.Agent, r.Status, r.Error)
		}
	}
	if resp.Partial {
		t.Error("Partial is set with every agent succeeded")
	}
	// The composer's prompt holds both results, and its answer uses both.
	compose := m.prompt(bosai.MarkerCompose)
	for _, want := range []string{"### sql (succeeded)", "country=France count=11", "### computation (succeeded)", "result = 588"} {
		if !strings.Contains(compose, want) {
			t.Errorf("composer prompt lacks %q:\n%s", want, compose)
		}
	}
	for _, want := range []string{"country=France count=11", "588"} {
		if !strings.Contains(resp.Answer, want) {
			t.Errorf("answer lacks %q: %s", want, resp.Answer)
		}
	}
	if resp.Data == nil || resp.Data.RowCount == 0 {
		t.Errorf("Data = %+v, want the SQL agent's table", resp.Data)
	}
}

// TestBarrierDetectsSequentialAgents shows the barrier test can fail: with
// one agent at a time the first agent waits alone and fails.
func TestBarrierDetectsSequentialAgents(t *testing.T) {
	b := newBarrier(2, 200*time.Millisecond)
	m := &hookModel{inner: bosai.NewOfflineModel(), before: func(ctx context.Context, p string) error {
		if agentPrompt(p) {
			return b.wait(ctx)
		}
		return nil
	}}
	bot := newBot(t, m, bosai.Config{MaxConcurrency: 1})
	resp, err := bot.Ask(context.Background(), bosai.Request{Question: twoAgents})
	if err != nil {
		t.Fatal(err)
	}
	first := resp.Results[0]
	if first.Status != bosai.StatusFailed || !strings.Contains(first.Error.Message, "not running concurrently") {
		t.Errorf("first agent: %s %+v, want failed at the barrier", first.Status, first.Error)
	}
}

// TestAgentFailureGivesPartialAnswer: the computation agent's sandbox
// fails; the knowledge agent's result still makes the answer, the failure
// is in the results and the trace, and the run does not fail.
func TestAgentFailureGivesPartialAnswer(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	resp, err := bot.Ask(context.Background(), bosai.Request{Question: "How many customers are there per country, and what is 49 / 0?", Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Partial {
		t.Error("Partial not set")
	}
	byAgent := map[bosai.AgentName]bosai.AgentResult{}
	for _, r := range resp.Results {
		byAgent[r.Agent] = r
	}
	if r := byAgent[bosai.AgentSQL]; r.Status != bosai.StatusSucceeded {
		t.Errorf("knowledge: %s %v", r.Status, r.Error)
	}
	comp := byAgent[bosai.AgentComputation]
	if comp.Status != bosai.StatusFailed || comp.Error == nil || comp.Error.Kind != bosai.KindSandbox || !strings.Contains(comp.Error.Message, "division by zero") {
		t.Fatalf("computation: %s %+v, want a sandbox failure", comp.Status, comp.Error)
	}
	for _, want := range []string{"country=France count=11", "computation agent failed", "partial"} {
		if !strings.Contains(resp.Answer, want) {
			t.Errorf("answer lacks %q: %s", want, resp.Answer)
		}
	}
	i := slices.IndexFunc(resp.Trace, func(e bosai.TraceEvent) bool {
		return e.Kind == bosai.TraceError && e.Agent == bosai.AgentComputation
	})
	if i < 0 || !strings.Contains(fmt.Sprint(resp.Trace[i].Data["error"]), "division by zero") {
		t.Errorf("trace has no error event of the computation agent: %+v", resp.Trace)
	}
	if resp.Data == nil {
		t.Error("Data is nil; want the successful knowledge agent's table")
	}
}

// failingTransport answers the first fails requests with 503, then 200.
type failingTransport struct {
	fails int
	calls atomic.Int32
}

func (f *failingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	n := int(f.calls.Add(1))
	code, body := http.StatusOK, `{"status":"operational"}`
	if n <= f.fails {
		code, body = http.StatusServiceUnavailable, `{"error":"down"}`
	}
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// TestAPIAgentRetries: the API agent's HTTP calls run under the resilience
// policy; retries are in the trace, and a call that keeps failing fails
// the agent, not the run.
func TestAPIAgentRetries(t *testing.T) {
	policy := &resilience.Config{Retry: resilience.RetryConfig{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}}
	for _, tc := range []struct {
		name    string
		fails   int
		status  bosai.Status
		retries int
	}{
		{"recovers", 1, bosai.StatusSucceeded, 1},
		{"gives up", 5, bosai.StatusFailed, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &failingTransport{fails: tc.fails}
			bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: &http.Client{Transport: tr}, HTTPPolicy: policy})
			resp, err := bot.Ask(context.Background(), bosai.Request{Question: "Is the service operational?", Trace: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Results) != 1 || resp.Results[0].Agent != bosai.AgentAPI {
				t.Fatalf("results %+v, want the api agent's", resp.Results)
			}
			if got := resp.Results[0].Status; got != tc.status {
				t.Errorf("status %s, want %s (%v)", got, tc.status, resp.Results[0].Error)
			}
			retries := 0
			for _, e := range resp.Trace {
				if e.Kind == bosai.TraceMessage && strings.HasPrefix(e.Message, "retrying") {
					retries++
				}
			}
			if retries != tc.retries {
				t.Errorf("%d retry events, want %d", retries, tc.retries)
			}
			if tc.status == bosai.StatusFailed {
				if k := resp.Results[0].Error.Kind; k != bosai.KindHTTP {
					t.Errorf("error kind %s, want %s", k, bosai.KindHTTP)
				}
				if !resp.Partial {
					t.Error("Partial not set")
				}
			} else if !strings.Contains(resp.Answer, "status operational") {
				t.Errorf("answer %q does not quote the API", resp.Answer)
			}
		})
	}
}

// TestTraceCompleteAndOrdered checks that the stream yields every event of
// the response's trace, each agent's in its own order, the response last,
// and that the trace runs planner, agents in plan order, composer.
func TestTraceCompleteAndOrdered(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	var live []bosai.TraceEvent
	var resp *bosai.Response
	for ev, err := range bot.Run(context.Background(), bosai.Request{Question: twoAgents, Trace: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if resp != nil {
			t.Fatal("an event after the response")
		}
		if ev.Response != nil {
			resp = ev.Response
		} else {
			live = append(live, *ev.Trace)
		}
	}
	if resp == nil {
		t.Fatal("no response")
	}
	type step struct {
		Kind  bosai.TraceKind
		Agent bosai.AgentName
	}
	steps := func(evs []bosai.TraceEvent, agent bosai.AgentName) []step {
		var out []step
		for _, e := range evs {
			if agent == "" || e.Agent == agent {
				out = append(out, step{e.Kind, e.Agent})
			}
		}
		return out
	}
	a := bosai.AgentSQL
	want := []step{{bosai.TraceDecision, bosai.AgentPlanner},
		// Both chosen agents pending.
		{bosai.TraceMessage, bosai.AgentSQL}, {bosai.TraceMessage, bosai.AgentComputation},
		// SQL: list tables, schema, generate, review, query.
		{bosai.TraceMessage, a}, {bosai.TraceTool, a}, {bosai.TraceTool, a}, {bosai.TraceDecision, a}, {bosai.TraceDecision, a}, {bosai.TraceTool, a}, {bosai.TraceResult, a}}
	a = bosai.AgentComputation
	want = append(want, step{bosai.TraceMessage, a}, step{bosai.TraceDecision, a}, step{bosai.TraceTool, a}, step{bosai.TraceResult, a})
	want = append(want, step{bosai.TraceResult, bosai.AgentComposer})
	if diff := cmp.Diff(want, steps(resp.Trace, "")); diff != "" {
		t.Errorf("response trace (-want +got):\n%s", diff)
	}
	// The stream has the same events; agents' events may interleave, but
	// each agent's come in order.
	sorted := func(evs []bosai.TraceEvent) []string {
		var s []string
		for _, e := range evs {
			s = append(s, fmt.Sprintf("%s %s %s %s", e.Time.Format(time.RFC3339Nano), e.Agent, e.Kind, e.Message))
		}
		slices.Sort(s)
		return s
	}
	if diff := cmp.Diff(sorted(resp.Trace), sorted(live)); diff != "" {
		t.Errorf("streamed events differ from the response's trace (-trace +stream):\n%s", diff)
	}
	for _, a := range []bosai.AgentName{bosai.AgentPlanner, bosai.AgentSQL, bosai.AgentComputation, bosai.AgentComposer} {
		if diff := cmp.Diff(steps(resp.Trace, a), steps(live, a)); diff != "" {
			t.Errorf("%s's streamed events out of order (-want +got):\n%s", a, diff)
		}
	}
	if live[0].Agent != bosai.AgentPlanner || live[len(live)-1].Agent != bosai.AgentComposer {
		t.Errorf("stream starts with %s and ends with %s, want planner and composer", live[0].Agent, live[len(live)-1].Agent)
	}
	// The run is checkpointed under its thread.
	st, err := bot.State(context.Background(), resp.Thread)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 0 || len(st.Results) != 2 || st.Response.Answer != resp.Answer {
		t.Errorf("saved state: pending %d, %d results, answer %q", st.Pending, len(st.Results), st.Response.Answer)
	}
}

// TestCancelStopsRun cancels while both agents wait in their model calls.
func TestCancelStopsRun(t *testing.T) {
	var started sync.WaitGroup
	started.Add(2)
	m := &hookModel{inner: bosai.NewOfflineModel(), before: func(ctx context.Context, p string) error {
		if agentPrompt(p) {
			started.Done()
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}}
	bot := newBot(t, m, bosai.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { started.Wait(); cancel() }()
	resp, err := bot.Ask(ctx, bosai.Request{Question: twoAgents})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Ask = %v, %v; want context.Canceled", resp, err)
	}
	if p := m.prompt(bosai.MarkerCompose); p != "" {
		t.Error("the composer ran after the cancellation")
	}
}

// TestPlannerFallback: a planner model that fails leaves the decision to
// the keyword heuristic, with confidence 0.4, and says so in the trace.
func TestPlannerFallback(t *testing.T) {
	m := &hookModel{inner: bosai.NewOfflineModel(), before: func(ctx context.Context, p string) error {
		if strings.HasPrefix(p, bosai.MarkerPlanner) {
			return resilience.MarkPermanent(errors.New("provider refused"))
		}
		return nil
	}}
	bot := newBot(t, m, bosai.Config{})
	resp, err := bot.Ask(context.Background(), bosai.Request{Question: twoAgents, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Plan.Fallback || resp.Plan.Confidence != 0.4 {
		t.Errorf("plan %+v, want the heuristic fallback", resp.Plan)
	}
	// The seed's heuristic: sql scores 4, computation 1.
	if diff := cmp.Diff([]bosai.AgentName{bosai.AgentSQL}, resp.Plan.Agents); diff != "" {
		t.Errorf("fallback agents (-want +got):\n%s", diff)
	}
	if e := resp.Trace[0]; e.Kind != bosai.TraceError || e.Agent != bosai.AgentPlanner {
		t.Errorf("first trace event %+v, want the planner's error", e)
	}
}

func TestPreferences(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	for _, tc := range []struct {
		name string
		req  bosai.Request
		want []bosai.AgentName
	}{
		{"prefer", bosai.Request{Question: twoAgents, Prefer: []bosai.AgentName{bosai.AgentComputation}},
			[]bosai.AgentName{bosai.AgentComputation, bosai.AgentSQL}},
		{"disable", bosai.Request{Question: twoAgents, Disable: []bosai.AgentName{bosai.AgentComputation}},
			[]bosai.AgentName{bosai.AgentSQL}},
		{"disable all", bosai.Request{Question: twoAgents, Disable: []bosai.AgentName{bosai.AgentSQL, bosai.AgentAPI, bosai.AgentComputation}},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := bot.Ask(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, resp.Plan.Agents); diff != "" {
				t.Errorf("agents (-want +got):\n%s", diff)
			}
			var ran []bosai.AgentName
			for _, r := range resp.Results {
				ran = append(ran, r.Agent)
			}
			if diff := cmp.Diff(tc.want, ran); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if len(tc.want) == 0 && !strings.Contains(resp.Answer, "No agent ran") {
				t.Errorf("answer %q, want one saying no agent ran", resp.Answer)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	if _, err := bot.Ask(context.Background(), bosai.Request{Question: "  "}); !errors.Is(err, bosai.ErrEmptyQuestion) {
		t.Errorf("empty question: %v, want ErrEmptyQuestion", err)
	}
	if err := bot.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := bot.Ask(context.Background(), bosai.Request{Question: twoAgents}); !errors.Is(err, bosai.ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}

// TestMermaid keeps README.md's diagram in step with the graph
// (go test -run TestMermaid -update rewrites testdata/graph.mmd).
func TestMermaid(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	for file, got := range map[string]string{"graph.mmd": bot.Graph().Mermaid(), "sql.mmd": bot.SQLMermaid()} {
		mermaidtest.Check(t, file, got, *update)
	}
}

// TestAPIPlanningDeclined: when no endpoint fits, the API agent's model
// makes no request and the agent fails with planning_declined.
func TestAPIPlanningDeclined(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	resp, err := bot.Ask(context.Background(), bosai.Request{Question: "Which API endpoint returns the weather?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 1 {
		t.Fatalf("results %+v, want the api agent's alone", resp.Results)
	}
	r := resp.Results[0]
	if r.Agent != bosai.AgentAPI || r.Status != bosai.StatusFailed || r.Error.Kind != bosai.KindPlanningDeclined {
		t.Errorf("result %+v, want the api agent declining", r)
	}
	if !strings.Contains(resp.Answer, "api_docs agent failed") {
		t.Errorf("answer %q does not say the api_docs agent failed", resp.Answer)
	}
}

// TestBreakStopsRun: a caller that stops reading ends the run; Close then
// finds nothing in flight (and goleak nothing running).
func TestBreakStopsRun(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	n := 0
	for ev, err := range bot.Run(context.Background(), bosai.Request{Question: twoAgents, Trace: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Trace == nil || ev.Trace.Agent != bosai.AgentPlanner {
			t.Fatalf("first event %+v, want the planner's decision", ev)
		}
		n++
		break
	}
	if n != 1 {
		t.Fatalf("%d events before break", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := bot.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// The seed's agent lifecycle in the live trace: each chosen agent is
// pending, then running, then succeeded or failed; an agent beyond
// max_turns is skipped and never runs.
func TestAgentLifecycle(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	statuses := map[bosai.AgentName][]string{}
	for ev, err := range bot.Run(t.Context(), bosai.Request{Question: "How many customers are there per country, and what is 49 / 0?", Prefer: []bosai.AgentName{bosai.AgentSQL}}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Trace != nil {
			if st, ok := lifecycle(ev.Trace.Data); ok {
				statuses[ev.Trace.Agent] = append(statuses[ev.Trace.Agent], st)
			}
		}
	}
	want := map[bosai.AgentName][]string{
		bosai.AgentSQL:         {"pending", "running", "succeeded"},
		bosai.AgentComputation: {"pending", "running", "failed"},
	}
	if diff := cmp.Diff(want, statuses); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}

	statuses = map[bosai.AgentName][]string{}
	resp, err := bot.Ask(t.Context(), bosai.Request{Question: "How many customers are there per country, and what is 12 * 49?", MaxTurns: 1, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range resp.Trace {
		if st, ok := lifecycle(ev.Data); ok {
			statuses[ev.Agent] = append(statuses[ev.Agent], st)
		}
	}
	want = map[bosai.AgentName][]string{
		bosai.AgentSQL:         {"pending", "running", "succeeded"},
		bosai.AgentComputation: {"skipped"},
	}
	if diff := cmp.Diff(want, statuses); diff != "" {
		t.Errorf("statuses with max_turns 1 (-want +got):\n%s", diff)
	}
}

// lifecycle returns the agent status a trace event's data reports, if any
// (tool events carry a tool call's own status, which is not one).
func lifecycle(data map[string]any) (string, bool) {
	st, _ := data["status"].(string)
	switch bosai.Status(st) {
	case bosai.StatusPending, bosai.StatusRunning, bosai.StatusSucceeded, bosai.StatusFailed, bosai.StatusSkipped:
		return st, true
	}
	return "", false
}
