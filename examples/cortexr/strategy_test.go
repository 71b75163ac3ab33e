package cortexr_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/cortexr"
	"github.com/agentgraph/agentgraph/examples/internal/sandbox"
	"github.com/agentgraph/agentgraph/mcp"
)

func mathOnly() []cortexr.Server {
	return []cortexr.Server{{Server: mcp.Server{Name: cortexr.MathServerName, InProcess: cortexr.NewMathServer("")}, Description: cortexr.MathServerDescription}}
}

const mathPerception = `{"intent":"compute","entities":["INDIA"],"selected_servers":["math"]}`

// A conservative plan with two tool calls is rejected before it runs, and
// the next attempt is told why.
func TestConservativeRejectsTwoCalls(t *testing.T) {
	one := "def solve():\n    numbers = strings_to_chars_to_int(string=\"INDIA\")\n    return \"FINAL_ANSWER: \" + str(numbers)\n"
	m := llmtest.New().
		On("perception engine", llmtest.Text(mathPerception)).
		On("Write a Starlark function", llmtest.Text(indiaPlan), llmtest.Text(one))
	a := newAgent(t, cortexr.Config{Model: scripted(t, m), Servers: mathOnly(), Strategy: cortexr.StrategyConservative})
	evs, ans := run(t, a, india)
	if ans.Outcome != cortexr.OutcomeAnswered || ans.Text != "[73, 78, 68, 73, 65]" {
		t.Fatalf("answer %+v", ans)
	}
	var errs []string
	var calls int
	for _, e := range evs {
		if e.Kind == cortexr.EventAction && e.Error != "" {
			errs = append(errs, e.Error)
		}
		if e.Kind == cortexr.EventToolCall {
			calls++
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "exactly one tool call") || !strings.Contains(errs[0], "calls 2 (strings_to_chars_to_int, int_list_to_exponential_sum)") {
		t.Fatalf("attempt errors %q; want the two-call plan rejected with the reason", errs)
	}
	if calls != 1 {
		t.Fatalf("%d tool calls; the rejected plan must not run", calls)
	}
	var prompts []string
	for _, c := range m.Calls() {
		if strings.Contains(c.Prompt, "Write a Starlark function") {
			prompts = append(prompts, c.Prompt)
		}
	}
	if len(prompts) != 2 || !strings.Contains(prompts[0], "Strategy: conservative") || !strings.Contains(prompts[1], "exactly one tool call per step") {
		t.Fatalf("decision prompts do not carry the strategy and the feedback: %q", prompts)
	}
}

// rendezvous is an MCP server whose tool meet returns only once n calls
// are in flight together, so it succeeds only when they run concurrently.
func rendezvous(n int) *server.MCPServer {
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	s := server.NewMCPServer("meet", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcpgo.NewTool("meet", mcpgo.WithDescription("Wait for the other calls."), mcpgo.WithString("who", mcpgo.Required())),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			mu.Lock()
			if arrived++; arrived == n {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
				return mcpgo.NewToolResultText("met " + req.GetString("who", "")), nil
			case <-time.After(20 * time.Second): // only reached when the calls run one by one
				return mcpgo.NewToolResultError("ran alone: the calls were not concurrent"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	return s
}

// Exploratory parallel runs independent calls concurrently.
func TestParallelRunsCallsConcurrently(t *testing.T) {
	plan := `def solve():
    r = parallel(calls=[["meet", {"who": "a"}], ["meet", {"who": "b"}], ["meet", {"who": "c"}]])
    return "FINAL_ANSWER: " + ", ".join(r)
`
	m := llmtest.New().
		On("perception engine", llmtest.Text(`{"intent":"meet","entities":[],"selected_servers":["meet"]}`)).
		On("Write a Starlark function", llmtest.Text(plan))
	a := newAgent(t, cortexr.Config{Model: scripted(t, m), Strategy: cortexr.StrategyParallel, Lifelines: -1,
		Servers: []cortexr.Server{{Server: mcp.Server{Name: "meet", InProcess: rendezvous(3)}, Description: "meeting"}}})
	evs, ans := run(t, a, "meet three times")
	if ans.Outcome != cortexr.OutcomeAnswered || ans.Text != "met a, met b, met c" {
		t.Fatalf("answer %+v", ans)
	}
	n := 0
	for _, e := range evs {
		if e.Kind == cortexr.EventToolCall {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d tool call events, want 3", n)
	}
	if !strings.Contains(m.Calls()[1].Prompt, "parallel(calls=") {
		t.Fatal("the decision prompt does not explain parallel()")
	}
}

// More than MaxParallelCalls calls together is a plan error.
func TestParallelBound(t *testing.T) {
	plan := "def solve():\n    r = parallel(calls=[[\"add\", {\"a\": i, \"b\": 1}] for i in range(5)])\n    return \"FINAL_ANSWER: \" + str(r)\n"
	m := llmtest.New().
		On("perception engine", llmtest.Text(mathPerception)).
		On("Write a Starlark function", llmtest.Text(plan))
	a := newAgent(t, cortexr.Config{Model: scripted(t, m), Servers: mathOnly(), Strategy: cortexr.StrategyParallel, Lifelines: -1})
	_, ans := run(t, a, "add things")
	if ans.Outcome != cortexr.OutcomeFailed || !strings.Contains(ans.Text, "at most 4") {
		t.Fatalf("answer %+v; want failed naming the bound", ans)
	}
}

// Exploratory sequential falls back to the next tool when one fails.
func TestSequentialFallsBack(t *testing.T) {
	plan := `def solve():
    r = try_call(tool="divide", args={"a": 1, "b": 0})
    if not r["ok"]:
        r = try_call(tool="add", args={"a": 1, "b": 1})
    return "FINAL_ANSWER: " + str(r["result"])
`
	m := llmtest.New().
		On("perception engine", llmtest.Text(mathPerception)).
		On("Write a Starlark function", llmtest.Text(plan))
	a := newAgent(t, cortexr.Config{Model: scripted(t, m), Servers: mathOnly(), Strategy: cortexr.StrategySequential})
	evs, ans := run(t, a, "divide 1 by 0, or else add 1 and 1")
	if ans.Outcome != cortexr.OutcomeAnswered || ans.Text != "2" {
		t.Fatalf("answer %+v", ans)
	}
	var calls []string
	for _, e := range evs {
		if e.Kind == cortexr.EventToolCall {
			calls = append(calls, e.Tool.Name+":"+map[bool]string{true: "ok", false: "failed"}[e.Tool.Error == ""])
		}
	}
	if strings.Join(calls, ",") != "divide:failed,add:ok" {
		t.Fatalf("calls %v; want divide failing, then add", calls)
	}
}

func TestParseStrategy(t *testing.T) {
	for _, c := range []struct {
		mode, exp string
		want      cortexr.Strategy
	}{
		{"conservative", "", cortexr.StrategyConservative},
		{"conservative", "parallel", cortexr.StrategyConservative},
		{"exploratory", "parallel", cortexr.StrategyParallel},
		{"exploratory", "sequential", cortexr.StrategySequential},
		{"exploratory_parallel", "", cortexr.StrategyParallel},
	} {
		if got, err := cortexr.ParseStrategy(c.mode, c.exp); err != nil || got != c.want {
			t.Errorf("ParseStrategy(%q, %q) = %q, %v; want %q", c.mode, c.exp, got, err, c.want)
		}
	}
	if _, err := cortexr.ParseStrategy("bold", ""); err == nil || !strings.Contains(err.Error(), "conservative or exploratory") {
		t.Errorf("bad mode error = %v", err)
	}
	if _, err := cortexr.New(cortexr.Config{Strategy: "bold"}); err == nil {
		t.Error("New accepted an unknown strategy")
	}
}

// A tool call the sandbox abandoned (the run ended while the tool, which
// ignores its context, had not returned) records nothing when it returns
// at last: no late tool output lands in the session's memory, for
// RecentSuccesses to offer.
func TestAbandonedToolCallLeavesNoMemory(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s := server.NewMCPServer("late", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcpgo.NewTool("late", mcpgo.WithDescription("Answer, eventually.")),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			once.Do(func() { close(entered) })
			<-release // ignores its context, like a read of a FIFO nobody writes
			return mcpgo.NewToolResultText("late answer"), nil
		})
	plan := "def solve():\n    return \"FINAL_ANSWER: \" + late()\n"
	m := llmtest.New().
		On("perception engine", llmtest.Text(`{"intent":"wait","entities":[],"selected_servers":["late"]}`)).
		On("Write a Starlark function", llmtest.Text(plan))
	a := newAgent(t, cortexr.Config{Model: scripted(t, m), Lifelines: -1, Limits: cortexr.Limits{Timeout: time.Hour},
		Servers: []cortexr.Server{{Server: mcp.Server{Name: "late", InProcess: s}, Description: "late answers"}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		var err error
		for _, e := range a.Run(ctx, "wait for it") {
			if e != nil {
				err = e
			}
		}
		done <- err
	}()
	// Bounded, so that a regression fails rather than hangs.
	guard, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stop()
	select {
	case <-entered:
	case err := <-done:
		close(release)
		t.Fatalf("the run ended (%v) before it called the tool", err)
	case <-guard.Done():
		close(release)
		t.Fatal("the plan never called the tool")
	}
	cancel() // the sandbox abandons the call
	// waitAbandoned waits until the sandbox counts n abandoned calls.
	waitAbandoned := func(n int) {
		for sandbox.Abandoned() != n {
			select {
			case <-guard.Done():
				close(release)
				t.Fatalf("sandbox.Abandoned() = %d, want %d", sandbox.Abandoned(), n)
			case <-time.After(time.Millisecond): // waits for the count, whatever its speed
			}
		}
	}
	waitAbandoned(1) // the plan has ended; the call has not
	close(release)
	// The run ends once the session's calls have returned; the agent's
	// function is counted until it returns too.
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	waitAbandoned(0)
	for _, it := range a.Memory().Items() {
		if it.Type == cortexr.ItemToolOutput {
			t.Errorf("memory holds %q, recorded after its plan ended", it.Text)
		}
	}
	if got := a.Memory().RecentSuccesses(0); len(got) != 0 {
		t.Errorf("RecentSuccesses() = %q, want none", got)
	}
}
