package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator"
)

// al1 scripts the AL1 conversation: add(2,3) and mul(4,5) in one turn, then
// add(5,20), then the answer "done".
func al1() *scripted {
	return &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
		switch n {
		case 0:
			return calls(call("c1", "add", `{"a":2,"b":3}`), call("c2", "mul", `{"a":4,"b":5}`)), nil
		case 1:
			r := toolResults(req)
			return calls(call("c3", "add", fmt.Sprintf(`{"a":%s,"b":%s}`, r["c1"].Text(), r["c2"].Text()))), nil
		default:
			return answer("the answer is " + toolResults(req)["c3"].Text()), nil
		}
	}}
}

func TestToolLoop(t *testing.T) {
	m := al1()
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{addTool, mulTool}, Instructions: "Compute."})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ag.Invoke(context.Background(), react.Input("compute"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Reply(); got != "the answer is 25" {
		t.Fatalf("reply %q", got)
	}
	if s.Outcome != react.OutcomeAnswered || s.Iterations != 3 {
		t.Fatalf("outcome %q after %d iterations", s.Outcome, s.Iterations)
	}
	// user, assistant(2 calls), tool c1, tool c2, assistant, tool c3, assistant
	var roles []string
	for _, msg := range s.Messages {
		if msg.ID == "" {
			t.Fatalf("message without id: %+v", msg)
		}
		roles = append(roles, string(msg.Role))
	}
	if got := strings.Join(roles, " "); got != "user assistant tool tool assistant tool assistant" {
		t.Fatalf("roles %s", got)
	}
	// Results in call order.
	if a, b := s.Messages[2].Parts[0].ToolResult, s.Messages[3].Parts[0].ToolResult; a.CallID != "c1" || a.Text() != "5" || b.CallID != "c2" || b.Text() != "20" {
		t.Fatalf("results %+v %+v", a, b)
	}
	reqs := m.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls", len(reqs))
	}
	if reqs[0].Messages[0].Role != model.RoleSystem || reqs[0].Messages[0].Text() != "Compute." {
		t.Fatalf("no system message: %+v", reqs[0].Messages[0])
	}
	if len(reqs[0].Tools) != 2 || reqs[0].Tools[0].Name != "add" || reqs[0].Tools[1].Name != "mul" {
		t.Fatalf("tools %+v", reqs[0].Tools)
	}
	want := model.Usage{InputTokens: 40, OutputTokens: 13}
	if s.Usage != want || s.RunUsage != want {
		t.Fatalf("usage %+v run %+v, want %+v", s.Usage, s.RunUsage, want)
	}
}

// Two calls of one turn run in one step, in parallel: each waits until the
// other has started.
func TestParallelCallsOneStep(t *testing.T) {
	ag := barrierAgent(t)
	steps := map[int][]string{}
	var final react.State
	for ev, err := range ag.Stream(context.Background(), react.Input("go"), graph.WithModes(graph.StreamUpdates, graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Mode {
		case graph.StreamUpdates:
			steps[ev.Step] = append(steps[ev.Step], ev.Node)
		case graph.StreamValues:
			final = ev.State
		}
	}
	if got := strings.Join(steps[2], ","); got != "tools,tools" {
		t.Fatalf("step 2 ran %q", got)
	}
	if final.Reply() != "2,4" {
		t.Fatalf("reply %q", final.Reply())
	}
}

// More calls in one turn than a turn holds inline, finishing in reverse
// order: the results are merged in call order, each in a tool message of
// its own with an id of its own.
func TestManyCallsMergedInCallOrder(t *testing.T) {
	const n = 5
	var done [n + 1]chan struct{}
	for i := range done {
		done[i] = make(chan struct{})
	}
	close(done[n])
	// Call i waits for call i+1 to finish, so the last call finishes first.
	chain := func(ctx context.Context, i, _ int) (int, error) {
		select {
		case <-done[i+1]:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		close(done[i])
		return i * 10, nil
	}
	m := &scripted{reply: func(k int, req *model.Request) (*model.Response, error) {
		if k == 0 {
			cs := make([]model.ToolCall, n)
			for i := range cs {
				cs[i] = call(fmt.Sprint("c", i), "chain", fmt.Sprintf(`{"a":%d,"b":0}`, i))
			}
			return calls(cs...), nil
		}
		return answer("done"), nil
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{intTool{"chain", chain}}})
	if err != nil {
		t.Fatal(err)
	}
	// The calls wait on one another, so they finish only if all n run at
	// once: under a concurrency cap below n they would wait forever. The
	// timeout turns that into a failure; it is a guard, not a speed check.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := ag.Invoke(ctx, react.Input("go"))
	if ctx.Err() != nil {
		t.Fatalf("the %d calls did not all run at once within 30s (is the agent's tool concurrency capped below %d?): %v", n, n, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var roles, results []string
	ids := map[string]bool{}
	for _, msg := range s.Messages {
		roles = append(roles, string(msg.Role))
		if msg.ID == "" || ids[msg.ID] {
			t.Errorf("message %q (%s) has an empty or repeated id", msg.ID, msg.Role)
		}
		ids[msg.ID] = true
		for _, p := range msg.Parts {
			if p.ToolResult != nil {
				results = append(results, p.ToolResult.CallID+"="+p.ToolResult.Text())
			}
		}
	}
	if got, want := strings.Join(roles, ","), "user,assistant,tool,tool,tool,tool,tool,assistant"; got != want {
		t.Errorf("roles %s, want %s", got, want)
	}
	if got, want := strings.Join(results, " "), "c0=0 c1=10 c2=20 c3=30 c4=40"; got != want {
		t.Errorf("results %s, want %s", got, want)
	}
}

// Failures of tools go back to the model as error results.
func TestToolErrorsGoBackToModel(t *testing.T) {
	failing := intTool{"fail", func(context.Context, int, int) (int, error) { return 0, errBoom }}
	panicking := intTool{"panic", func(context.Context, int, int) (int, error) { panic("kaput") }}
	var seen map[string]model.ToolResult
	m := &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
		if n == 0 {
			return calls(
				call("1", "nope", `{}`),
				call("2", "fail", `{"a":1,"b":2}`),
				call("3", "add", `{"a":"one"}`),
				call("4", "panic", `{"a":1,"b":2}`),
				call("5", "add", `{"a":1,"b":2}`),
			), nil
		}
		seen = toolResults(req)
		return answer("sorry"), nil
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{addTool, failing, panicking}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ag.Invoke(context.Background(), react.Input("go"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcome != react.OutcomeAnswered {
		t.Fatalf("outcome %q", s.Outcome)
	}
	for id, want := range map[string]string{"1": `no tool named "nope"`, "2": "boom", "3": "arguments must be", "4": "kaput"} {
		r := seen[id]
		if !r.IsError || !strings.Contains(r.Text(), want) {
			t.Errorf("call %s: result %+v, want an error containing %q", id, r, want)
		}
	}
	if r := seen["5"]; r.IsError || r.Text() != "3" {
		t.Errorf("call 5: %+v", r)
	}
}

func TestIterationLimit(t *testing.T) {
	m := &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
		return calls(call(fmt.Sprint("c", n), "add", `{"a":1,"b":1}`)), nil
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{addTool}, MaxIterations: 3})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ag.Invoke(context.Background(), react.Input("loop"))
	if err != nil {
		t.Fatalf("the limit is an outcome, not an error: %v", err)
	}
	if s.Outcome != react.OutcomeIterationLimit || s.Iterations != 3 || len(m.requests()) != 3 {
		t.Fatalf("outcome %q after %d iterations and %d calls", s.Outcome, s.Iterations, len(m.requests()))
	}
	last, _ := s.Messages.Last()
	r := last.Parts[0].ToolResult
	if last.Role != model.RoleTool || r.CallID != "c2" || !r.IsError || !strings.Contains(r.Text(), "limit of 3") {
		t.Fatalf("last message %+v", last)
	}
}

func TestInstructionsFromState(t *testing.T) {
	m := &scripted{reply: func(int, *model.Request) (*model.Response, error) { return answer("ok"), nil }}
	ag, err := react.New(react.Config{Model: m, Instructions: "default"})
	if err != nil {
		t.Fatal(err)
	}
	in := react.Input("hi")
	in.Instructions = "from state"
	if _, err := ag.Invoke(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Invoke(context.Background(), react.Input("hi")); err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	if got := reqs[0].Messages[0].Text(); got != "from state" {
		t.Fatalf("system %q", got)
	}
	if got := reqs[1].Messages[0].Text(); got != "default" {
		t.Fatalf("system %q", got)
	}
}

// A thread is a conversation: the second run sees the first, and usage is
// counted per run and per thread.
func TestThreadMemoryAndUsage(t *testing.T) {
	m := al1()
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{addTool, mulTool}, Checkpointer: checkpoint.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := onThread("t1")
	s1, err := ag.Invoke(ctx, react.Input("first"))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ag.Invoke(ctx, react.Input("second"))
	if err != nil {
		t.Fatal(err)
	}
	if s2.Reply() != "the answer is " {
		// The scripted model's fourth call finds no c3 result: it answers
		// with an empty number, which shows it was called once.
		t.Fatalf("reply %q", s2.Reply())
	}
	reqs := m.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model calls", len(reqs))
	}
	if got := reqs[3].Messages; len(got) != len(s1.Messages)+1 || got[0].Text() != "first" || got[len(got)-1].Text() != "second" {
		t.Fatalf("second run's request does not hold the conversation: %d messages", len(got))
	}
	if s2.RunUsage != (model.Usage{InputTokens: 20, OutputTokens: 3}) || s2.Iterations != 1 {
		t.Fatalf("run usage %+v, iterations %d", s2.RunUsage, s2.Iterations)
	}
	if s2.Usage != s1.Usage.Merge(s2.RunUsage) {
		t.Fatalf("thread usage %+v, want %+v", s2.Usage, s1.Usage.Merge(s2.RunUsage))
	}
}

// Cancelling the run reaches a running tool, and the run ends with the
// context's error.
func TestCancellationReachesTools(t *testing.T) {
	started := make(chan struct{})
	sawCancel := make(chan error, 1)
	slow := intTool{"slow", func(ctx context.Context, a, b int) (int, error) {
		close(started)
		<-ctx.Done()
		sawCancel <- ctx.Err()
		return 0, ctx.Err()
	}}
	m := &scripted{reply: func(int, *model.Request) (*model.Response, error) {
		return calls(call("s", "slow", `{"a":1,"b":1}`), call("f", "add", `{"a":1,"b":1}`)), nil
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{slow, addTool}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err = ag.Invoke(ctx, react.Input("go"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if err := <-sawCancel; !errors.Is(err, context.Canceled) {
		t.Fatalf("tool saw %v", err)
	}
}

type forecast struct {
	City  string `json:"city" jsonschema:"description=the city"`
	TempC int    `json:"temp_c"`
}

func TestStructuredAnswer(t *testing.T) {
	def, err := react.AnswerTool[forecast]("final_answer", "Give the forecast.")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(def.Parameters, &schema); err != nil || schema.Properties["temp_c"] == nil {
		t.Fatalf("schema %s: %v", def.Parameters, err)
	}
	m := &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
		if req.ToolChoice.Mode != model.ToolRequired {
			return nil, errors.New("tool choice not required")
		}
		switch n {
		case 0:
			return calls(call("a", "add", `{"a":10,"b":11}`)), nil
		case 1:
			return calls(call("b", "final_answer", `{"city":"Oslo",`)), nil // broken JSON
		default:
			return calls(call("c", "final_answer", `{"city":"Oslo","temp_c":`+toolResults(reqWith(m0(req)))["a"].Text()+`}`)), nil
		}
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{addTool}, Answer: def})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ag.Invoke(context.Background(), react.Input("forecast"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := react.DecodeAnswer[forecast](s)
	if err != nil {
		t.Fatal(err)
	}
	if f != (forecast{"Oslo", 21}) || s.Outcome != react.OutcomeAnswered || s.Iterations != 3 {
		t.Fatalf("answer %+v, outcome %q, %d iterations", f, s.Outcome, s.Iterations)
	}
	last, _ := s.Messages.Last()
	if last.Role != model.RoleTool || last.Parts[0].ToolResult.CallID != "c" {
		t.Fatalf("the answer call has no result: %+v", last)
	}
}

// m0 returns the request truncated after the first tool message, where the
// add result is.
func m0(req *model.Request) []model.Message {
	for i, msg := range req.Messages {
		if msg.Role == model.RoleTool {
			return req.Messages[:i+1]
		}
	}
	return nil
}

func reqWith(msgs []model.Message) *model.Request { return &model.Request{Messages: msgs} }

func TestNewErrors(t *testing.T) {
	m := &scripted{}
	for _, tc := range []struct {
		cfg  react.Config
		want string
	}{
		{react.Config{}, "Config.Model is nil"},
		{react.Config{Model: m, Tools: []operator.Tool{addTool, addTool}}, `two tools are named "add"`},
		{react.Config{Model: m, Tools: []operator.Tool{addTool}, Approve: []string{"mul"}}, `names "mul", which is not a tool`},
		{react.Config{Model: m, MaxIterations: -1}, "MaxIterations is -1"},
	} {
		_, err := react.New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// Input messages without ids (a caller's own State, not react.Input) get
// ids once, on the first turn, and are not repeated.
func TestInputWithoutIDs(t *testing.T) {
	m := &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
		if n == 0 {
			return calls(call("a", "add", `{"a":1,"b":2}`)), nil
		}
		return answer("3"), nil
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{addTool}})
	if err != nil {
		t.Fatal(err)
	}
	in := react.State{Messages: model.Messages{model.User("add"), model.User("please")}}
	s, err := ag.Invoke(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	ids := map[string]bool{}
	for _, msg := range s.Messages {
		roles = append(roles, string(msg.Role)+":"+msg.Text())
		if msg.ID == "" || ids[msg.ID] {
			t.Errorf("message %q (%s) has an empty or repeated id", msg.ID, msg.Role)
		}
		ids[msg.ID] = true
	}
	if got, want := strings.Join(roles, ","), "user:add,user:please,assistant:,tool:,assistant:3"; got != want {
		t.Fatalf("messages %s, want %s", got, want)
	}
	if in.Messages[0].ID != "" {
		t.Fatal("the caller's input was changed")
	}
}

// barrierAgent is an agent whose model calls p and q in one turn, then
// answers with their results "x,y"; each call waits until the other has
// started, so the run ends only if they run in parallel.
func barrierAgent(t *testing.T) *graph.Compiled[react.State] {
	t.Helper()
	var started sync.WaitGroup
	started.Add(2)
	barrier := func(ctx context.Context, a, b int) (int, error) {
		started.Done()
		done := make(chan struct{})
		go func() { started.Wait(); close(done) }()
		select {
		case <-done:
			return a + b, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(30 * time.Second):
			return 0, errors.New("the other call never started: calls did not run in parallel")
		}
	}
	m := &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
		if n == 0 {
			return calls(call("x", "p", `{"a":1,"b":1}`), call("y", "q", `{"a":2,"b":2}`)), nil
		}
		r := toolResults(req)
		return answer(r["x"].Text() + "," + r["y"].Text()), nil
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{intTool{"p", barrier}, intTool{"q", barrier}}})
	if err != nil {
		t.Fatal(err)
	}
	return ag
}

// Each call runs the tool of its name, whether the agent has a few tools or
// many, and a tool the agent does not have is an error result. Changing the
// caller's Config.Tools after New changes nothing.
func TestToolByName(t *testing.T) {
	for _, n := range []int{2, 8, 9, 20} {
		t.Run(fmt.Sprint(n, " tools"), func(t *testing.T) {
			tools := make([]operator.Tool, n)
			for i := range tools {
				k := i
				tools[i] = intTool{fmt.Sprint("t", k), func(_ context.Context, a, b int) (int, error) { return 1000*k + a + b, nil }}
			}
			var seen map[string]model.ToolResult
			m := &scripted{reply: func(i int, req *model.Request) (*model.Response, error) {
				if i == 0 {
					return calls(
						call("first", "t0", `{"a":1,"b":2}`),
						call("last", fmt.Sprint("t", n-1), `{"a":1,"b":2}`),
						call("none", fmt.Sprint("t", n), `{"a":1,"b":2}`),
						call("prefix", "t", `{"a":1,"b":2}`),
					), nil
				}
				seen = toolResults(req)
				return answer("ok"), nil
			}}
			ag, err := react.New(react.Config{Model: m, Tools: tools})
			if err != nil {
				t.Fatal(err)
			}
			tools[0] = intTool{"t0", func(context.Context, int, int) (int, error) { return -1, nil }}
			if _, err := ag.Invoke(context.Background(), react.Input("go")); err != nil {
				t.Fatal(err)
			}
			if r := seen["first"]; r.IsError || r.Text() != "3" {
				t.Errorf("t0: %+v, want 3", r)
			}
			if r := seen["last"]; r.IsError || r.Text() != fmt.Sprint(1000*(n-1)+3) {
				t.Errorf("t%d: %+v, want %d", n-1, r, 1000*(n-1)+3)
			}
			for _, id := range []string{"none", "prefix"} {
				if r := seen[id]; !r.IsError || !strings.Contains(r.Text(), "no tool named") {
					t.Errorf("call %s: %+v, want an unknown-tool error", id, r)
				}
			}
		})
	}
}
