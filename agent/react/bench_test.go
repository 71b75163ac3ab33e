package react_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/operator"
)

// Workload AL1 (BENCHMARKS.md): one user message; the model calls add(2,3)
// and mul(4,5) in one turn, then add(5,20), then answers "done". One op is
// the conversation: 3 model calls, 3 typed tool executions, the agent's
// message bookkeeping, no checkpointing. AL1-stream streams the answer in 5
// chunks. The model answers at once, so what is measured is the agent's
// own overhead.

type al1Args struct {
	A int `json:"a"`
	B int `json:"b"`
}

var al1Script = [][]model.ToolCall{
	{call("call_1", "add", `{"a":2,"b":3}`), call("call_2", "mul", `{"a":4,"b":5}`)},
	{call("call_3", "add", `{"a":5,"b":20}`)},
}

var al1Chunks = []string{"d", "o", "n", "e", ""}

// al1ArgText holds the arguments of al1Script's calls as text, which a
// streamed call's deltas carry, as eino's scripted model carries its
// script's text.
var al1ArgText = func() [][]string {
	out := make([][]string, len(al1Script))
	for t, cs := range al1Script {
		for _, c := range cs {
			out[t] = append(out[t], string(c.Arguments))
		}
	}
	return out
}()

// al1Model answers from the script by its turn, the number of assistant
// messages in the request, building a fresh response on every call with
// as many allocations as eino's scripted model makes for its message: a
// turn of tool calls, two (the response with its parts; the calls), and
// the answer, one.
type al1Model struct{}

// al1Reply is a response with room for its parts, allocated at once.
type al1Reply struct {
	resp  model.Response
	parts [2]model.Part
}

func (m al1Model) respond(req *model.Request) *model.Response {
	resp, _ := m.turn(req)
	return resp
}

// turn returns the response to req and the turn it answers.
func (al1Model) turn(req *model.Request) (*model.Response, int) {
	turn := 0
	for i := range req.Messages {
		if req.Messages[i].Role == model.RoleAssistant {
			turn++
		}
	}
	r := new(al1Reply)
	if turn < len(al1Script) {
		// As a client decoding a reply: the calls in one slice, as
		// eino's scripted model has them.
		calls := slices.Clone(al1Script[turn])
		for i := range calls {
			r.parts[i] = model.Part{Kind: model.PartToolCall, ToolCall: &calls[i]}
		}
		r.resp = model.Response{Message: model.Message{Role: model.RoleAssistant, Parts: r.parts[:len(calls)]}, FinishReason: model.FinishToolCalls, Usage: model.Usage{InputTokens: 10, OutputTokens: 5}}
		return &r.resp, turn
	}
	r.parts[0] = model.TextPart("done")
	r.resp = model.Response{Message: model.Message{Role: model.RoleAssistant, Parts: r.parts[:1]}, FinishReason: model.FinishStop, Usage: model.Usage{InputTokens: 10, OutputTokens: 1}}
	return &r.resp, turn
}

func (m al1Model) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	return m.respond(req), nil
}

func (m al1Model) Stream(_ context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, turn := m.turn(req)
		if resp.FinishReason != model.FinishToolCalls {
			for _, c := range al1Chunks {
				if !yield(model.Chunk{Kind: model.ChunkText, Text: c}, nil) {
					return
				}
			}
		} else {
			// The parts are all calls: read in place, without the
			// slice ToolCalls would make; their arguments' text is
			// the script's.
			for i := range resp.Message.Parts {
				c := resp.Message.Parts[i].ToolCall
				if !yield(model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: al1ArgText[turn][i]}}, nil) {
					return
				}
			}
		}
		yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, nil)
	}
}

// al1Tools are the typed tools two ways: operator.FuncTool (schema
// validation and strict decoding before the function runs) and a minimal
// operator.Tool decoding its arguments with encoding/json, as eino's
// InferTool tools do, which isolates the agent's own overhead.
func al1Tools(kind string) []operator.Tool {
	if kind == "functool" {
		add := operator.MustFuncTool("add", "Add two integers.", func(_ context.Context, in al1Args) (int, error) { return in.A + in.B, nil })
		mul := operator.MustFuncTool("mul", "Multiply two integers.", func(_ context.Context, in al1Args) (int, error) { return in.A * in.B, nil })
		return []operator.Tool{add, mul}
	}
	return []operator.Tool{plainTool{"add", func(a al1Args) int { return a.A + a.B }}, plainTool{"mul", func(a al1Args) int { return a.A * a.B }}}
}

type plainTool struct {
	name string
	fn   func(al1Args) int
}

func (t plainTool) Definition() model.ToolDef {
	return model.ToolDef{Name: t.name, Description: t.name, Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}`)}
}

func (t plainTool) Call(_ context.Context, args json.RawMessage) (*model.ToolResult, error) {
	var in al1Args
	if err := json.Unmarshal(args, &in); err != nil {
		return operator.ErrorResult(err.Error()), nil
	}
	return &model.ToolResult{Content: []model.Part{model.TextPart(strconv.Itoa(t.fn(in)))}}, nil
}

func al1Agent(tb testing.TB, tools string) *graph.Compiled[react.State] {
	ag, err := react.New(react.Config{Model: al1Model{}, Tools: al1Tools(tools)})
	if err != nil {
		tb.Fatal(err)
	}
	return ag
}

// checkAL1 checks one op: the answer, three assistant messages and the
// three results in call order.
func checkAL1(s react.State) error {
	if s.Reply() != "done" || s.Outcome != react.OutcomeAnswered {
		return fmt.Errorf("reply %q, outcome %q", s.Reply(), s.Outcome)
	}
	var got []string
	assistants := 0
	for _, m := range s.Messages {
		switch m.Role {
		case model.RoleAssistant:
			assistants++
		case model.RoleTool:
			for _, p := range m.Parts {
				got = append(got, p.ToolResult.CallID+"="+p.ToolResult.Text())
			}
		}
	}
	if fmt.Sprint(got) != "[call_1=5 call_2=20 call_3=25]" || assistants != 3 {
		return fmt.Errorf("results %v, %d assistant messages", got, assistants)
	}
	return nil
}

func runAL1Stream(ctx context.Context, ag *graph.Compiled[react.State]) (react.State, int, error) {
	var final react.State
	pieces := 0
	for ev, err := range ag.Stream(ctx, react.Input("compute please"), graph.WithModes(graph.StreamMessages, graph.StreamValues)) {
		if err != nil {
			return final, 0, err
		}
		if c, ok := ev.Chunk(); ok && c.Kind == model.ChunkText && c.Text != "" {
			pieces++
		}
		if ev.Mode == graph.StreamValues {
			final = ev.State
		}
	}
	return final, pieces, nil
}

func TestAL1(t *testing.T) {
	for _, tools := range []string{"functool", "plain"} {
		ag := al1Agent(t, tools)
		s, err := ag.Invoke(context.Background(), react.Input("compute please"))
		if err != nil {
			t.Fatal(err)
		}
		if err := checkAL1(s); err != nil {
			t.Fatal(tools, err)
		}
		s, pieces, err := runAL1Stream(context.Background(), ag)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkAL1(s); err != nil || pieces != 4 {
			t.Fatalf("%s: %v; answer in %d pieces", tools, err, pieces)
		}
	}
}

// reportCPU adds the process's CPU time per operation (all goroutines,
// the garbage collector's included), which a machine shared with other
// work inflates less than ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if used := cpuTime() - start; used > 0 && b.N > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkAL1(b *testing.B) {
	for _, tools := range []string{"functool", "plain"} {
		b.Run(tools, func(b *testing.B) {
			ctx := context.Background()
			ag := al1Agent(b, tools)
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				s, err := ag.Invoke(ctx, react.Input("compute please"))
				if err != nil || len(s.Messages) != 7 {
					b.Fatal(err, len(s.Messages))
				}
			}
			reportCPU(b, start)
		})
	}
}

func BenchmarkAL1Stream(b *testing.B) {
	for _, tools := range []string{"functool", "plain"} {
		b.Run(tools, func(b *testing.B) {
			ctx := context.Background()
			ag := al1Agent(b, tools)
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				_, pieces, err := runAL1Stream(ctx, ag)
				if err != nil || pieces != 4 {
					b.Fatal(err, pieces)
				}
			}
			reportCPU(b, start)
		})
	}
}

// One input given to concurrent runs stays as it was: each run's messages
// are its own (run with -race).
func TestInputSharedByRuns(t *testing.T) {
	ag := al1Agent(t, "plain")
	in := react.Input("compute please")
	want := fmt.Sprint(in.Messages)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := ag.Invoke(context.Background(), in)
			if err == nil {
				err = checkAL1(s)
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(in.Messages); got != want || len(in.Messages) != 1 {
		t.Fatalf("the input changed: %s, was %s", got, want)
	}
}
