package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator"
)

// echoTool is a tool returning its arguments as its text result.
type echoTool struct {
	name string
	out  func(args json.RawMessage) *model.ToolResult
	runs *atomic.Int64
}

func (t echoTool) Definition() model.ToolDef {
	return model.ToolDef{Name: t.name, Description: "echo", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (t echoTool) Call(_ context.Context, args json.RawMessage) (*model.ToolResult, error) {
	if t.runs != nil {
		t.runs.Add(1)
	}
	if t.out != nil {
		return t.out(args), nil
	}
	return &model.ToolResult{Content: []model.Part{model.TextPart(string(args))}}, nil
}

// runTurn runs an agent whose model makes the calls cs, then answers, and
// returns the calls as the conversation keeps them and the results the
// model read, in order.
func runTurn(t *testing.T, cfg react.Config, cs ...model.ToolCall) ([]model.ToolCall, []model.ToolResult) {
	t.Helper()
	m := &scripted{reply: func(n int, _ *model.Request) (*model.Response, error) {
		if n == 0 {
			return calls(cs...), nil
		}
		return answer("done"), nil
	}}
	cfg.Model = m
	ag, err := react.New(cfg)
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
	var gotCalls []model.ToolCall
	var results []model.ToolResult
	for _, msg := range m.requests()[1].Messages {
		gotCalls = append(gotCalls, msg.ToolCalls()...)
		for _, p := range msg.Parts {
			if p.ToolResult != nil {
				results = append(results, *p.ToolResult)
			}
		}
	}
	if len(gotCalls) != len(cs) || len(results) != len(cs) {
		t.Fatalf("%d calls and %d results for %d calls", len(gotCalls), len(results), len(cs))
	}
	return gotCalls, results
}

func TestConfigBoundsRefuseNegative(t *testing.T) {
	for _, field := range []string{"MaxParallelTools", "MaxCallsPerTurn", "MaxArgumentBytes", "MaxResultBytes", "MaxResultBinaryBytes"} {
		cfg := react.Config{Model: &scripted{}}
		switch field {
		case "MaxParallelTools":
			cfg.MaxParallelTools = -1
		case "MaxCallsPerTurn":
			cfg.MaxCallsPerTurn = -1
		case "MaxArgumentBytes":
			cfg.MaxArgumentBytes = -1
		case "MaxResultBytes":
			cfg.MaxResultBytes = -1
		case "MaxResultBinaryBytes":
			cfg.MaxResultBinaryBytes = -1
		}
		if _, err := react.New(cfg); err == nil || !strings.Contains(err.Error(), "Config."+field) {
			t.Errorf("%s -1: error %v, want one naming Config.%s", field, err, field)
		}
	}
}

// The calls of a turn run at most MaxParallelTools at a time. Each call
// waits (yielding, a bounded number of times) for all the turn's calls to
// start, so that without a bound they all run at once.
func TestMaxParallelTools(t *testing.T) {
	const n, limit = 12, 3
	var started, running, most atomic.Int64
	tool := echoTool{name: "slow", out: func(args json.RawMessage) *model.ToolResult {
		started.Add(1)
		r := running.Add(1)
		for m := most.Load(); r > m && !most.CompareAndSwap(m, r); m = most.Load() {
		}
		for i := 0; i < 20000 && started.Load() < n; i++ {
			runtime.Gosched()
		}
		running.Add(-1)
		return &model.ToolResult{Content: []model.Part{model.TextPart("ok")}}
	}}
	cs := make([]model.ToolCall, n)
	for i := range cs {
		cs[i] = call(fmt.Sprintf("c%d", i), "slow", `{}`)
	}
	_, results := runTurn(t, react.Config{Tools: []operator.Tool{tool}, MaxParallelTools: limit}, cs...)
	if m := most.Load(); m > limit || m < 1 {
		t.Fatalf("%d calls ran at once; MaxParallelTools is %d", m, limit)
	}
	for i, r := range results {
		if r.IsError || r.CallID != cs[i].ID {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
}

// The calls after the first MaxCallsPerTurn are not run, and each is
// answered with an error result naming the field.
func TestMaxCallsPerTurn(t *testing.T) {
	var runs atomic.Int64
	tool := echoTool{name: "echo", runs: &runs}
	cs := []model.ToolCall{call("a", "echo", `{"n":1}`), call("b", "echo", `{"n":2}`), call("c", "echo", `{"n":3}`), call("d", "echo", `{"n":4}`)}
	_, results := runTurn(t, react.Config{Tools: []operator.Tool{tool}, MaxCallsPerTurn: 2}, cs...)
	if runs.Load() != 2 {
		t.Fatalf("the tool ran %d times, want 2", runs.Load())
	}
	for i, r := range results {
		if r.CallID != cs[i].ID {
			t.Fatalf("result %d answers %q, want %q", i, r.CallID, cs[i].ID)
		}
		if i < 2 {
			if r.IsError || r.Text() != string(cs[i].Arguments) {
				t.Fatalf("result %d: %+v", i, r)
			}
			continue
		}
		if !r.IsError || !strings.Contains(r.Text(), "Config.MaxCallsPerTurn") || !strings.Contains(r.Text(), "later turn") {
			t.Fatalf("result %d of a call over the limit: %+v", i, r)
		}
	}
}

// A call with arguments over MaxArgumentBytes is not run.
func TestMaxArgumentBytes(t *testing.T) {
	var runs atomic.Int64
	tool := echoTool{name: "echo", runs: &runs}
	big := `{"x":"` + strings.Repeat("a", 100) + `"}`
	_, results := runTurn(t, react.Config{Tools: []operator.Tool{tool}, MaxArgumentBytes: 64}, call("a", "echo", `{"x":1}`), call("b", "echo", big))
	if runs.Load() != 1 || results[0].IsError {
		t.Fatalf("ran %d times; first result %+v", runs.Load(), results[0])
	}
	if r := results[1]; !r.IsError || !strings.Contains(r.Text(), fmt.Sprintf("%d bytes", len(big))) || !strings.Contains(r.Text(), "Config.MaxArgumentBytes") {
		t.Fatalf("result of the big call: %+v", r)
	}
}

// A call of an unknown tool gets the name clipped and a few close names,
// not the list of every tool.
func TestUnknownToolNamesCloseTools(t *testing.T) {
	var tools []operator.Tool
	for i := range 200 {
		tools = append(tools, echoTool{name: fmt.Sprintf("tool_number_%03d", i)})
	}
	long := "../../etc/passwd" + strings.Repeat("A", 5000)
	_, results := runTurn(t, react.Config{Tools: tools}, call("a", "tool_numbr_107", `{}`), call("b", long, `{}`))
	r := results[0].Text()
	if !results[0].IsError || !strings.Contains(r, `"tool_numbr_107"`) || !strings.Contains(r, "tool_number_107") || strings.Contains(r, "tool_number_150") || len(r) > 300 {
		t.Fatalf("result of a near miss (%d bytes): %s", len(r), r)
	}
	r = results[1].Text()
	if !results[1].IsError || len(r) > 300 || !strings.Contains(r, "5016 bytes") || strings.Contains(r, "tool_number_") {
		t.Fatalf("result of a long unknown name (%d bytes): %s", len(r), r)
	}
	if len(results[1].Name) > operator.MaxToolNameLen {
		t.Fatalf("the result names the tool with %d bytes", len(results[1].Name))
	}
}

// Calls without an id, and calls repeating an earlier call's id, get fresh
// ids before they run; each result answers its call, in call order.
func TestCallIDsMadeUnique(t *testing.T) {
	tool := echoTool{name: "echo"}
	cs := []model.ToolCall{call("", "echo", `{"n":1}`), call("", "echo", `{"n":2}`), call("dup", "echo", `{"n":3}`), call("dup", "echo", `{"n":4}`)}
	got, results := runTurn(t, react.Config{Tools: []operator.Tool{tool}}, cs...)
	seen := map[string]bool{}
	for i, c := range got {
		if c.ID == "" || seen[c.ID] {
			t.Fatalf("call %d has id %q; ids %v", i, c.ID, got)
		}
		seen[c.ID] = true
		if string(c.Arguments) != string(cs[i].Arguments) {
			t.Fatalf("call %d has arguments %s", i, c.Arguments)
		}
		if results[i].CallID != c.ID || results[i].Text() != string(cs[i].Arguments) {
			t.Fatalf("result %d answers %q with %q; call %q", i, results[i].CallID, results[i].Text(), c.ID)
		}
	}
	if got[2].ID != "dup" {
		t.Fatalf("the first call with id dup was given %q", got[2].ID)
	}
	if cs[0].ID != "" {
		t.Fatal("the model's calls were changed in place")
	}
}

// A result over MaxResultBytes is cut, with a note saying so.
func TestMaxResultBytes(t *testing.T) {
	text := strings.Repeat("z", react.DefaultMaxResultBytes+5000)
	huge := echoTool{name: "huge", out: func(json.RawMessage) *model.ToolResult {
		return &model.ToolResult{Content: []model.Part{model.TextPart(text)}, Structured: json.RawMessage(`{"big":true}`)}
	}}
	small := echoTool{name: "small", out: func(json.RawMessage) *model.ToolResult {
		return &model.ToolResult{Content: []model.Part{model.TextPart("fine")}}
	}}
	_, results := runTurn(t, react.Config{Tools: []operator.Tool{huge, small}}, call("a", "huge", `{}`), call("b", "small", `{}`))
	r := results[0]
	if len(r.Content) != 2 || len(r.Content[0].Text) != react.DefaultMaxResultBytes || r.Structured != nil {
		t.Fatalf("cut result: %d parts, %d bytes, structured %s", len(r.Content), len(r.Content[0].Text), r.Structured)
	}
	note := r.Content[1].Text
	want := fmt.Sprintf("%d bytes were left out", len(text)+len(`{"big":true}`)-react.DefaultMaxResultBytes)
	if !strings.Contains(note, "Config.MaxResultBytes") || !strings.Contains(note, want) {
		t.Fatalf("note %q, want it to say %q", note, want)
	}
	if results[1].Text() != "fine" || len(results[1].Content) != 1 {
		t.Fatalf("a small result changed: %+v", results[1])
	}
}

// Images count against MaxResultBinaryBytes, not MaxResultBytes: by
// default a screenshot of a few MiB reaches the model whole, and binary
// data over its bound is left out with a note.
func TestMaxResultBinaryBytes(t *testing.T) {
	shot := make([]byte, 3<<20)
	screen := echoTool{name: "screen", out: func(json.RawMessage) *model.ToolResult {
		return &model.ToolResult{Content: []model.Part{model.TextPart("the screen"), model.BinaryPart("image/png", shot)}}
	}}
	_, results := runTurn(t, react.Config{Tools: []operator.Tool{screen}}, call("a", "screen", `{}`))
	if r := results[0]; len(r.Content) != 2 || len(r.Content[1].Data) != len(shot) {
		t.Fatalf("by default the image did not reach the model: %d parts", len(r.Content))
	}

	_, results = runTurn(t, react.Config{Tools: []operator.Tool{screen}, MaxResultBinaryBytes: 1 << 20}, call("a", "screen", `{}`))
	r := results[0]
	if len(r.Content) != 2 || r.Content[0].Text != "the screen" {
		t.Fatalf("cut result: %+v", r.Content)
	}
	if note := r.Content[1].Text; !strings.Contains(note, "1 binary parts of 3145728 bytes were left out") || !strings.Contains(note, "Config.MaxResultBinaryBytes") {
		t.Fatalf("note %q", note)
	}
}

// With approval, a call the turn's bounds refuse is not reviewed: it is
// answered with its refusal, and approving the others runs them.
func TestApprovalSkipsRefusedCalls(t *testing.T) {
	var runs atomic.Int64
	m := &scripted{reply: func(n int, _ *model.Request) (*model.Response, error) {
		if n == 0 {
			return calls(call("a", "echo", `{"n":1}`), call("b", "echo", `{"big":"`+strings.Repeat("x", 100)+`"}`), call("c", "echo", `{"n":3}`)), nil
		}
		return answer("done"), nil
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{echoTool{name: "echo", runs: &runs}},
		Approve: []string{"*"}, Checkpointer: checkpoint.NewMemory(), MaxCallsPerTurn: 2, MaxArgumentBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	ctx := onThread("refused")
	_, err = ag.Invoke(ctx, react.Input("go"))
	var ie *graph.InterruptError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 {
		t.Fatalf("err %v, want one interrupt", err)
	}
	var rv react.Review
	if err := ie.Interrupts[0].Decode(&rv); err != nil {
		t.Fatal(err)
	}
	if len(rv.Calls) != 1 || rv.Calls[0].ID != "a" {
		t.Fatalf("review %+v, want only call a", rv)
	}
	s, err := ag.Invoke(ctx, react.State{}, graph.Resume([]react.Decision{react.Approve(rv.Calls[0])}))
	if err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 || s.Outcome != react.OutcomeAnswered {
		t.Fatalf("echo ran %d times, outcome %q; want once", runs.Load(), s.Outcome)
	}
	results := toolResults(m.requests()[1])
	if r := results["b"]; !r.IsError || !strings.Contains(r.Text(), "MaxArgumentBytes") {
		t.Fatalf("result of b: %+v", r)
	}
	if r := results["c"]; !r.IsError || !strings.Contains(r.Text(), "MaxCallsPerTurn") {
		t.Fatalf("result of c: %+v", r)
	}
	if r := results["a"]; r.IsError || r.Text() != `{"n":1}` {
		t.Fatalf("result of a: %+v", r)
	}
}

// A reviewer's edit is bounded like the model's arguments: an edit over
// MaxArgumentBytes fails the resumed run with an error naming the limit,
// does not run the tool, and the run stays paused for other decisions.
func TestApprovalEditOverMaxArgumentBytes(t *testing.T) {
	var runs atomic.Int64
	m := &scripted{reply: func(n int, _ *model.Request) (*model.Response, error) {
		if n == 0 {
			return calls(call("a", "echo", `{"n":1}`)), nil
		}
		return answer("done"), nil
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{echoTool{name: "echo", runs: &runs}},
		Approve: []string{"echo"}, Checkpointer: checkpoint.NewMemory(), MaxArgumentBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	ctx := onThread("edit-big")
	_, err = ag.Invoke(ctx, react.Input("go"))
	var ie *graph.InterruptError
	if !errors.As(err, &ie) {
		t.Fatalf("err %v, want an interrupt", err)
	}
	var rv react.Review
	if err := ie.Interrupts[0].Decode(&rv); err != nil {
		t.Fatal(err)
	}
	big := json.RawMessage(`{"big":"` + strings.Repeat("x", 100) + `"}`)
	_, err = ag.Invoke(ctx, react.State{}, graph.Resume([]react.Decision{react.Edit(rv.Calls[0], big)}))
	if err == nil || !strings.Contains(err.Error(), "Config.MaxArgumentBytes") || !strings.Contains(err.Error(), "110 bytes") {
		t.Fatalf("resume with a big edit: %v, want an error naming the limit", err)
	}
	if runs.Load() != 0 {
		t.Fatalf("echo ran %d times with the refused edit", runs.Load())
	}
	s, err := ag.Invoke(ctx, react.State{}, graph.Resume([]react.Decision{react.Edit(rv.Calls[0], json.RawMessage(`{"n":2}`))}))
	if err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 || s.Outcome != react.OutcomeAnswered {
		t.Fatalf("echo ran %d times, outcome %q; want once", runs.Load(), s.Outcome)
	}
	if r := toolResults(m.requests()[1])["a"]; r.IsError || r.Text() != `{"n":2}` {
		t.Fatalf("result of a: %+v", r)
	}
}

// Streamed tool-call chunks keep the model's ids; the conversation, the
// results and the model node's update use the fresh ids the agent gave
// calls with repeated ids, at the same positions (see the package doc).
func TestStreamedCallsKeepModelIDs(t *testing.T) {
	m := &scripted{reply: func(n int, _ *model.Request) (*model.Response, error) {
		if n == 0 {
			return calls(call("dup", "echo", `{"n":1}`), call("dup", "echo", `{"n":2}`)), nil
		}
		return answer("done"), nil
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{echoTool{name: "echo"}}})
	if err != nil {
		t.Fatal(err)
	}
	streamed := map[int]string{} // the ids of the deltas, by index
	var done []model.ToolCall    // the calls of the first ChunkDone
	var updated []model.ToolCall // the calls of the model node's first update
	var final react.State
	for ev, err := range ag.Stream(context.Background(), react.Input("go"), graph.WithModes(graph.StreamMessages, graph.StreamUpdates, graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Mode {
		case graph.StreamMessages:
			c, _ := ev.Chunk()
			switch {
			case c.Kind == model.ChunkToolCall && c.ToolCall.ID != "":
				streamed[c.ToolCall.Index] = c.ToolCall.ID
			case c.Kind == model.ChunkDone && done == nil:
				done = c.Response.ToolCalls()
			}
		case graph.StreamUpdates:
			if ev.Node == react.NodeModel && updated == nil {
				msgs, _ := react.MessagesField.Get(ev.Update)
				for _, msg := range msgs {
					updated = append(updated, msg.ToolCalls()...)
				}
			}
		case graph.StreamValues:
			final = ev.State
		}
	}
	if streamed[0] != "dup" || streamed[1] != "dup" || len(done) != 2 || done[1].ID != "dup" {
		t.Fatalf("streamed ids %v, ChunkDone calls %+v; want the model's ids", streamed, done)
	}
	kept := final.Messages[1].ToolCalls()
	if len(kept) != 2 || kept[0].ID != "dup" || kept[1].ID == "dup" || !strings.HasPrefix(kept[1].ID, "call_") || string(kept[1].Arguments) != `{"n":2}` {
		t.Fatalf("kept calls %+v; want the second with a fresh id, at its position", kept)
	}
	if len(updated) != 2 || updated[1].ID != kept[1].ID {
		t.Fatalf("the model node's update has calls %+v, want those kept %+v", updated, kept)
	}
	if r := final.Messages[3].Parts[0].ToolResult; r.CallID != kept[1].ID || r.Text() != `{"n":2}` {
		t.Fatalf("second result %+v answers %q, want %q", r, r.CallID, kept[1].ID)
	}
}

// TestIterationLimitIgnoresNegativeIterations: a run whose input says
// Iterations is negative (a client's state, say) and ends with tool
// results, as a run continues, still makes at most Config.MaxIterations
// model calls, however high the step limit: the count was taken from the
// input and a negative one let the model be called thousands of times.
func TestIterationLimitIgnoresNegativeIterations(t *testing.T) {
	m := &scripted{reply: func(n int, _ *model.Request) (*model.Response, error) {
		return calls(call(fmt.Sprint("c", n), "echo", `{}`)), nil
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{echoTool{name: "echo"}}, MaxIterations: 3})
	if err != nil {
		t.Fatal(err)
	}
	in := react.State{Iterations: -1000, Messages: model.Messages{
		{ID: "u", Role: model.RoleUser, Parts: []model.Part{model.TextPart("go")}},
		{ID: "a", Role: model.RoleAssistant, Parts: []model.Part{model.ToolCallPart(call("x", "echo", `{}`))}},
		{ID: "r", Role: model.RoleTool, Parts: []model.Part{{Kind: model.PartToolResult, ToolResult: &model.ToolResult{CallID: "x", Name: "echo", Content: []model.Part{model.TextPart("ok")}}}}},
	}}
	s, err := ag.Invoke(context.Background(), in, graph.WithStepLimit(10000))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.requests()); n > 3 || s.Outcome != react.OutcomeIterationLimit || s.Iterations > 3 {
		t.Fatalf("%d model calls, outcome %q, iterations %d; want at most 3 calls ending at the limit", n, s.Outcome, s.Iterations)
	}
}
