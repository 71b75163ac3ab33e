package swarm_test

import (
	"context"
	"errors"
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/websearch"
	"github.com/agentgraph/agentgraph/examples/internal/mermaidtest"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/examples/supervisor/supervisortest"
	"github.com/agentgraph/agentgraph/examples/swarm"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/resilience"
)

var update = flag.Bool("update", false, "rewrite testdata/graph.mmd")

const teamTask = "Find what Acme's Team plan costs per editor, then calculate the yearly cost for 10 editors"

const seedTeamRequest = "Build me a team that research stocks and writes a Python report"

func newSwarm(t *testing.T, cfg swarm.Config) *swarm.Swarm {
	t.Helper()
	s, err := swarm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// run collects a run's events and its outcome; it fails the test on an
// error or a missing EventDone.
func run(t *testing.T, s *swarm.Swarm, task string) ([]swarm.Event, *swarm.Outcome) {
	t.Helper()
	var events []swarm.Event
	for ev, err := range s.Run(context.Background(), task) {
		if err != nil {
			t.Fatalf("Run(%q): %v", task, err)
		}
		events = append(events, ev)
	}
	s.WaitRetention() // the start's, in the background
	if len(events) == 0 || events[len(events)-1].Kind != swarm.EventDone {
		t.Fatalf("Run(%q) did not end with EventDone: %v", task, events)
	}
	return events, events[len(events)-1].Outcome
}

func ofKind(events []swarm.Event, k swarm.EventKind) []swarm.Event {
	var out []swarm.Event
	for _, e := range events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func reviewStatuses(r swarm.Result) []supervisor.Verdict {
	var out []supervisor.Verdict
	for _, rv := range r.Reviews {
		out = append(out, rv.Verdict)
	}
	return out
}

// TestMultiAgent routes one request to two different agents, the second
// using the first's result, and composes both into the answer.
func TestMultiAgent(t *testing.T) {
	t.Parallel()
	s := newSwarm(t, swarm.Config{})
	_, out := run(t, s, teamTask)
	var agents []string
	for _, r := range out.Results {
		if !r.OK {
			t.Errorf("result of %s failed: %s", r.Step, r.Error)
		}
		agents = append(agents, r.Agent)
	}
	if diff := cmp.Diff([]string{"mcp_agent_knowledge", "mcp_agent_calculator"}, agents); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}
	if out.Status != "complete" {
		t.Errorf("status = %q, want complete", out.Status)
	}
	for _, want := range []string{"$49 per editor", "49 * 12 * 10 = 5880"} {
		if !strings.Contains(out.Answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, out.Answer)
		}
	}
	// The search returned three passages; the reflection kept what the task
	// needs (FIXED) and the result carries the fixed output.
	kb := out.Results[0]
	if diff := cmp.Diff([]supervisor.Verdict{supervisor.VerdictFixed}, reviewStatuses(kb)); diff != "" {
		t.Errorf("knowledge reviews (-want +got):\n%s", diff)
	}
	if strings.Contains(kb.Output, "passages for") {
		t.Errorf("knowledge output was not refined: %q", kb.Output)
	}
	if out.Usage.InputTokens == 0 {
		t.Errorf("usage not summed: %+v", out.Usage)
	}
}

// TestPlanMutates checks that the plan evolves with the results: the
// calculation step waits for the price, then is rewritten with it.
func TestPlanMutates(t *testing.T) {
	t.Parallel()
	s := newSwarm(t, swarm.Config{})
	events, out := run(t, s, teamTask)
	plans := ofKind(events, swarm.EventPlan)
	if len(plans) != 3 {
		t.Fatalf("got %d plans, want 3 (route knowledge, route calculator, finish): %v", len(plans), plans)
	}
	type row struct{ ID, Agent, Task, Status string }
	rows := func(p []swarm.Step) []row {
		var out []row
		for _, s := range p {
			out = append(out, row{s.ID, s.Agent, s.Task, s.Status})
		}
		return out
	}
	want := [][]row{
		{{"step_1", "mcp_agent_knowledge", "Find what Acme's Team plan costs per editor", "pending"},
			{"step_2", "mcp_agent_calculator", "calculate the yearly cost for 10 editors (use the value from step_1)", "pending"}},
		{{"step_1", "mcp_agent_knowledge", "Find what Acme's Team plan costs per editor", "done"},
			{"step_2", "mcp_agent_calculator", "calculate 49 * 12 * 10", "pending"}},
		{{"step_1", "mcp_agent_knowledge", "Find what Acme's Team plan costs per editor", "done"},
			{"step_2", "mcp_agent_calculator", "calculate 49 * 12 * 10", "done"}},
	}
	for i, p := range plans {
		if diff := cmp.Diff(want[i], rows(p.Plan)); diff != "" {
			t.Errorf("plan %d (-want +got):\n%s", i+1, diff)
		}
	}
	if diff := cmp.Diff([][]string{{"mcp_agent_knowledge"}, {"mcp_agent_calculator"}, nil}, [][]string{plans[0].Agents, plans[1].Agents, plans[2].Agents}); diff != "" {
		t.Errorf("routing (-want +got):\n%s", diff)
	}
	if out.Turns != 3 {
		t.Errorf("turns = %d, want 3", out.Turns)
	}
}

// TestReflectionRetries: the calculator agent first passes "15% of 240"
// as written, the calculator rejects it, the reflection REJECTS the output
// with feedback, and the agent's second attempt, following it, is approved.
func TestReflectionRetries(t *testing.T) {
	t.Parallel()
	s := newSwarm(t, swarm.Config{})
	events, out := run(t, s, "What is 15% of 240?")
	if len(out.Results) != 1 {
		t.Fatalf("results = %+v, want one", out.Results)
	}
	r := out.Results[0]
	if diff := cmp.Diff([]supervisor.Verdict{supervisor.VerdictRejected, supervisor.VerdictApproved}, reviewStatuses(r)); diff != "" {
		t.Errorf("reviews (-want +got):\n%s", diff)
	}
	if !r.OK || r.Attempts != 2 || r.Output != "15/100*240 = 36" {
		t.Errorf("result = ok %v, %d attempts, output %q; want ok, 2, %q", r.OK, r.Attempts, r.Output, "15/100*240 = 36")
	}
	exec := ofKind(events, swarm.EventExecute)
	if len(exec) != 2 || exec[0].Error == "" || exec[0].Arguments["expression"] != "15% of 240" {
		t.Errorf("first execution should fail on the literal expression: %v", exec)
	}
	if !strings.Contains(r.Reviews[0].Feedback, "N/100*M") {
		t.Errorf("feedback does not say how to fix it: %q", r.Reviews[0].Feedback)
	}
}

// TestSkillReuse: a second similar task retrieves the first's skill, and
// its lesson spares the rejected attempt; the same task on a swarm with no
// skills needs the retry.
func TestSkillReuse(t *testing.T) {
	t.Parallel()
	lib := &swarm.SkillLibrary{}
	s := newSwarm(t, swarm.Config{Skills: lib})
	run(t, s, "What is 15% of 240?")
	if lib.Len() != 1 {
		t.Fatalf("skills saved = %d, want 1", lib.Len())
	}
	events, out := run(t, s, "What is 20% of 350?")
	found := ofKind(events, swarm.EventSkills)
	if len(found) != 1 || found[0].Skills[0].Task != "What is 15% of 240" || found[0].Skills[0].Lesson == "" {
		t.Fatalf("skills events = %+v, want the first task's skill with its lesson", found)
	}
	r := out.Results[0]
	if r.Attempts != 1 || r.Output != "20/100*350 = 70" || !slices.Equal(r.Skills, []string{"What is 15% of 240"}) {
		t.Errorf("with the skill: %d attempts, output %q, skills %q; want 1, %q, the first task", r.Attempts, r.Output, r.Skills, "20/100*350 = 70")
	}

	fresh := newSwarm(t, swarm.Config{})
	_, out = run(t, fresh, "What is 20% of 350?")
	if got := out.Results[0].Attempts; got != 2 {
		t.Errorf("without the skill: %d attempts, want 2", got)
	}
}

// brokenKnowledge is an MCP server that lists the knowledge tool but fails
// every call, like a server whose index is down.
func brokenKnowledge(t *testing.T) *server.MCPServer {
	srv := server.NewMCPServer("knowledge", "0.0.1", server.WithToolCapabilities(false))
	srv.AddTool(mcpgo.NewTool("search_knowledge", mcpgo.WithDescription("Search the knowledge base."),
		mcpgo.WithString("query", mcpgo.Required())),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return nil, errors.New("index unavailable")
		})
	return srv
}

func servers(t *testing.T, knowledge *server.MCPServer) []mcp.Server {
	calc, err := calculator.New(calculator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	web, err := websearch.New(websearch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return []mcp.Server{{Name: "knowledge", InProcess: knowledge}, {Name: "calculator", InProcess: calc}, {Name: "websearch", InProcess: web}}
}

// TestFailingServer: the knowledge server fails every call; the agent
// gives up after its attempts, the supervisor plans the step again on the
// web search agent, and the run ends with an answer, not an error.
func TestFailingServer(t *testing.T) {
	t.Parallel()
	s := newSwarm(t, swarm.Config{Servers: servers(t, brokenKnowledge(t)), Manager: mcp.ManagerConfig{Resilience: &resilience.Config{}}})
	_, out := run(t, s, "Find what Acme's Team plan costs per editor")
	if len(out.Results) < 2 {
		t.Fatalf("results = %+v, want the failure and the fallback", out.Results)
	}
	failed := out.Results[0]
	if failed.Agent != "mcp_agent_knowledge" || failed.OK || failed.Attempts != swarm.DefaultMaxAttempts ||
		!strings.Contains(failed.Error, "index unavailable") {
		t.Errorf("first result = %+v, want knowledge failing %d times with the server's error", failed, swarm.DefaultMaxAttempts)
	}
	var replanned bool
	for _, st := range out.Plan {
		if st.Agent == "mcp_agent_websearch" && st.Task == failed.Task {
			replanned = true
		}
	}
	if !replanned {
		t.Errorf("the plan was not mutated to retry the step on websearch: %+v", out.Plan)
	}
	// The bundled web pages do not say what Acme's Team plan costs: the
	// reflection rejects the search results as irrelevant, so no step is
	// done and the run failed, saying why.
	if out.Status != swarm.StatusFailed || !strings.Contains(out.Answer, "mcp_agent_knowledge failed") ||
		!strings.Contains(out.Answer, "mcp_agent_websearch failed") {
		t.Errorf("status %q, answer %q; want failed, naming both failures", out.Status, out.Answer)
	}
}

// TestUnreachableServer: a server that cannot even start is shown to the
// supervisor with no tools, which routes around it.
func TestUnreachableServer(t *testing.T) {
	t.Parallel()
	srv := servers(t, nil)
	srv[0] = mcp.Server{Name: "knowledge", Command: filepath.Join(t.TempDir(), "no-such-server")}
	s := newSwarm(t, swarm.Config{Servers: srv, Manager: mcp.ManagerConfig{Resilience: &resilience.Config{}}})
	_, out := run(t, s, "What is 2 + 3, then find what Acme's Team plan costs")
	for _, r := range out.Results {
		if r.Agent == "mcp_agent_knowledge" {
			t.Errorf("routed to the unreachable server: %+v", r)
		}
	}
	if out.Answer == "" || !strings.Contains(out.Answer, "2 + 3 = 5") {
		t.Errorf("answer = %q, want the calculation", out.Answer)
	}
}

// offline returns a scripted model that leaves every call its rules do not
// answer to the swarm's offline model.
func offline() *llmtest.Model {
	return llmtest.New().Default(llmtest.From(swarm.NewOfflineModel()))
}

// prefixed matches calls whose prompt starts with marker.
func prefixed(marker string) func(llmtest.Call) bool {
	return func(c llmtest.Call) bool { return strings.HasPrefix(c.Prompt, marker) }
}

// supervisorModel answers the supervisor's prompts with a fixed decision
// and every other prompt with the offline model.
func supervisorModel(decision string) *llmtest.Model {
	return offline().OnFunc(prefixed(swarm.MarkerSupervisor), llmtest.Text(decision))
}

// TestCircuitBreaker: a supervisor that keeps routing to a failing agent is
// stopped after routing to it twice more without progress.
func TestCircuitBreaker(t *testing.T) {
	t.Parallel()
	decision := `{"thought_process":"keep trying","selected_agents":["mcp_agent_knowledge"],
		"plan":[{"id":"step_1","agent":"mcp_agent_knowledge","task":"Find the Team price","status":"pending"}]}`
	client, err := agent.New(agent.Config{Model: supervisorModel(decision)})
	if err != nil {
		t.Fatal(err)
	}
	s := newSwarm(t, swarm.Config{Client: client, MaxAttempts: 1, Servers: servers(t, brokenKnowledge(t)),
		Manager: mcp.ManagerConfig{Resilience: &resilience.Config{}}})
	events, out := run(t, s, "Find the Team price")
	if len(out.Results) != 2 || out.Turns != 3 {
		t.Errorf("%d results in %d turns, want 2 in 3 (route, route, break)", len(out.Results), out.Turns)
	}
	plans := ofKind(events, swarm.EventPlan)
	if last := plans[len(plans)-1]; !strings.Contains(last.Text, "Circuit breaker") || last.Agents != nil {
		t.Errorf("last plan event = %q -> %v, want the circuit breaker handing over to QA", last.Text, last.Agents)
	}
	if out.Status != "failed" {
		t.Errorf("status = %q, want failed", out.Status)
	}
}

// TestCancel: cancelling the context stops the run with the context's
// error and no outcome; breaking out of the loop stops it too (goleak in
// TestMain checks that nothing is left running).
func TestCancel(t *testing.T) {
	t.Parallel()
	s := newSwarm(t, swarm.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var kinds []swarm.EventKind
	var runErr error
	for ev, err := range s.Run(ctx, teamTask) {
		if err != nil {
			runErr = err
			break
		}
		kinds = append(kinds, ev.Kind)
		if ev.Kind == swarm.EventPlan {
			cancel()
		}
	}
	if !errors.Is(runErr, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", runErr)
	}
	if slices.Contains(kinds, swarm.EventDone) || slices.Contains(kinds, swarm.EventResult) {
		t.Errorf("the run went on after cancel: %v", kinds)
	}

	for ev, err := range s.Run(context.Background(), teamTask) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == swarm.EventExecute {
			break
		}
	}
}

// TestDurable: each run is checkpointed on its own thread; the final state
// can be loaded back.
func TestDurable(t *testing.T) {
	t.Parallel()
	s := newSwarm(t, swarm.Config{})
	_, out := run(t, s, "What is 2 + 3?")
	snap, err := s.Graph().Thread(out.Thread).State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Values.Answer != out.Answer || snap.Values.Status != "complete" {
		t.Errorf("saved state: answer %q status %q; want %q complete", snap.Values.Answer, snap.Values.Status, out.Answer)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	s, err := swarm.New(swarm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Do(context.Background(), "  "); !errors.Is(err, swarm.ErrEmptyTask) {
		t.Errorf("empty task: %v, want ErrEmptyTask", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Do(context.Background(), "What is 1 + 1?"); !errors.Is(err, swarm.ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
	if _, err := swarm.New(swarm.Config{Servers: []mcp.Server{}}); err == nil {
		t.Error("New with no servers succeeded")
	}
}

// TestMermaid keeps the README's diagram in step with the graph
// (go test -run TestMermaid -update rewrites the golden file).
func TestMermaid(t *testing.T) {
	s := newSwarm(t, swarm.Config{})
	mermaidtest.Check(t, "graph.mmd", s.Graph().Mermaid(), *update)
}

// cancelOnCall returns a swarm whose client's model is hang(called), and
// a context that is cancelled once the model closes called (or when the
// test ends).
func cancelOnCall(t *testing.T, hang func(called chan struct{}) *llmtest.Model) (*swarm.Swarm, context.Context) {
	t.Helper()
	called := make(chan struct{})
	client, err := agent.New(agent.Config{Model: hang(called)})
	if err != nil {
		t.Fatal(err)
	}
	s := newSwarm(t, swarm.Config{Client: client})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		select {
		case <-called:
		case <-ctx.Done():
		}
		cancel()
	}()
	return s, ctx
}

// hangingAgentModel blocks on the agents' prompts until the call's context
// ends, closing called when the first such call starts; other prompts go to
// the offline model.
func hangingAgentModel(called chan struct{}) *llmtest.Model {
	var once sync.Once
	return offline().OnFunc(func(c llmtest.Call) bool {
		if !strings.HasPrefix(c.Prompt, swarm.MarkerAgent) {
			return false
		}
		once.Do(func() { close(called) })
		return true
	}, llmtest.Hang())
}

// TestCancelDuringModelCall: cancelling while an agent waits on its model
// ends the call and the run with the context's error.
func TestCancelDuringModelCall(t *testing.T) {
	t.Parallel()
	s, ctx := cancelOnCall(t, hangingAgentModel)
	_, err := s.Do(ctx, teamTask)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Do = %v, want context.Canceled", err)
	}
}

// TestResume: a run cancelled while its first agent waits on the model
// resumes from its checkpoint; the supervisor's first turn is not run
// again, and the run completes.
func TestResume(t *testing.T) {
	t.Parallel()
	s, ctx := cancelOnCall(t, hangOnce)
	var thread string
	for ev, err := range s.Run(ctx, teamTask) {
		thread = ev.Thread
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("first run: %v, want context.Canceled", err)
			}
			break
		}
	}
	if thread == "" {
		t.Fatal("the failed run's event names no thread")
	}
	var plans int
	var out *swarm.Outcome
	for ev, err := range s.Resume(context.Background(), thread) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case swarm.EventPlan:
			plans++
		case swarm.EventDone:
			out = ev.Outcome
		}
	}
	if out == nil || out.Status != "complete" || out.Turns != 3 || !strings.Contains(out.Answer, "5880") {
		t.Fatalf("resumed outcome = %+v, want complete in 3 turns with 5880", out)
	}
	if plans != 2 {
		t.Errorf("resumed run made %d plans, want 2 (its first turn was saved)", plans)
	}
	again, err := collectDone(s.Resume(context.Background(), thread))
	if err != nil || again.Answer != out.Answer {
		t.Errorf("resuming a finished run: %v, %+v; want the same outcome", err, again)
	}
	if _, err := collectDone(s.Resume(context.Background(), "no-such-thread")); err == nil {
		t.Error("resuming an unknown thread succeeded")
	}
}

func collectDone(seq func(func(swarm.Event, error) bool)) (*swarm.Outcome, error) {
	for ev, err := range seq {
		if err != nil {
			return nil, err
		}
		if ev.Kind == swarm.EventDone {
			return ev.Outcome, nil
		}
	}
	return nil, errors.New("no outcome")
}

// hangOnce hangs the first agent prompt until its context ends, closing
// called when it starts; every other prompt goes to the offline model.
func hangOnce(called chan struct{}) *llmtest.Model {
	var once sync.Once
	return offline().OnFunc(func(c llmtest.Call) bool {
		first := false
		if strings.HasPrefix(c.Prompt, swarm.MarkerAgent) {
			once.Do(func() { first = true; close(called) })
		}
		return first
	}, llmtest.Hang())
}

// junkCritiqueModel never gives a valid verdict to supervisor.Critique's
// prompts; other prompts go to the offline model.
func junkCritiqueModel() *llmtest.Model {
	return offline().OnFunc(func(c llmtest.Call) bool { return isCritique(c.Prompt) }, llmtest.Text("Looks good to me!"))
}

// TestReflectionFallback: with no valid verdict the tool's status decides
// (supervisor.FallbackReview): both tools succeeded, so both outputs are
// approved as they are (the offline reviewer would have FIXED the search
// result), and the run completes.
func TestReflectionFallback(t *testing.T) {
	t.Parallel()
	client, err := agent.New(agent.Config{Model: junkCritiqueModel()})
	if err != nil {
		t.Fatal(err)
	}
	s := newSwarm(t, swarm.Config{Client: client})
	events, out := run(t, s, teamTask)
	if out.Status != "complete" || len(out.Results) != 2 {
		t.Fatalf("outcome %q with %d results, want complete with 2", out.Status, len(out.Results))
	}
	for _, r := range out.Results {
		if diff := cmp.Diff([]supervisor.Verdict{supervisor.VerdictApproved}, reviewStatuses(r)); diff != "" || !r.OK {
			t.Errorf("%s: ok %v, reviews (-want +got):\n%s", r.Agent, r.OK, diff)
		}
	}
	if !strings.Contains(out.Results[0].Output, "passages for") {
		t.Errorf("knowledge output was changed without a FIXED verdict: %q", out.Results[0].Output)
	}
	reviews := ofKind(events, swarm.EventReview)
	if len(reviews) != 2 || !reviews[0].Fallback || !reviews[1].Fallback {
		t.Errorf("review events = %v, want two fallback verdicts", reviews)
	}
}

// isCritique reports whether a prompt is supervisor.Critique's.
func isCritique(prompt string) bool {
	r, ok := supervisortest.Parse(prompt)
	return ok && r.Step == supervisortest.Critique
}

// raceSaver calls onRead once, after the first read of a thread's latest
// checkpoint once armed, before that read returns: another writer moves
// the thread on between a reader's check and its run.
type raceSaver struct {
	checkpoint.Saver
	mu     sync.Mutex
	onRead func()
}

func (r *raceSaver) Get(ctx context.Context, thread, id string) (*checkpoint.Snapshot, error) {
	snap, err := r.Saver.Get(ctx, thread, id)
	r.mu.Lock()
	on := r.onRead
	if id == "" && !strings.Contains(thread, "|") {
		r.onRead = nil
	} else {
		on = nil
	}
	r.mu.Unlock()
	if on != nil {
		on()
	}
	return snap, err
}

func (r *raceSaver) arm(f func()) {
	r.mu.Lock()
	r.onRead = f
	r.mu.Unlock()
}

// TestResumeRace: of two resumes of a failed run that both read it
// unfinished, the one that saves second fails with checkpoint.ErrConflict
// rather than running the finished task again, and the thread keeps the
// first one's Outcome.
func TestResumeRace(t *testing.T) {
	t.Parallel()
	called := make(chan struct{})
	client, err := agent.New(agent.Config{Model: hangOnce(called)})
	if err != nil {
		t.Fatal(err)
	}
	saver := &raceSaver{Saver: checkpoint.NewMemory()}
	s := newSwarm(t, swarm.Config{Client: client, Checkpointer: saver})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		select {
		case <-called:
		case <-ctx.Done():
		}
		cancel()
	}()
	var thread string
	for ev, err := range s.Run(ctx, teamTask) {
		thread = ev.Thread
		if err != nil {
			break
		}
	}
	var first *swarm.Outcome
	saver.arm(func() {
		out, err := collectDone(s.Resume(t.Context(), thread))
		if err != nil {
			t.Errorf("the first resume: %v", err)
		}
		first = out
	})
	var dones int
	var lateErr error
	for ev, err := range s.Resume(t.Context(), thread) {
		if err != nil {
			lateErr = err
			break
		}
		if ev.Kind == swarm.EventDone {
			dones++
		}
	}
	if first == nil || first.Status != "complete" {
		t.Fatalf("the first resume's outcome: %+v; want complete", first)
	}
	if !errors.Is(lateErr, checkpoint.ErrConflict) || dones != 0 {
		t.Errorf("the second resume, which read the thread before the first finished it: %d outcomes, error %v; want none and checkpoint.ErrConflict", dones, lateErr)
	}
	st, err := s.Graph().Thread(thread).State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Next) != 0 || st.Values.Turns != first.Turns || st.Values.Answer != first.Answer {
		t.Errorf("the thread after both resumes: next %v, %d turns; want the first resume's finished state (%d turns)", st.Next, st.Values.Turns, first.Turns)
	}
}
