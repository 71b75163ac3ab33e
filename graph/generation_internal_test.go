package graph

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
)

type genState struct{ N int }

// keptScopeGraph returns a graph whose node "ask" calls m through
// Generate and keeps its task's context in *kept; the node fails when
// the call does.
func keptScopeGraph(t *testing.T, m model.Model, kept *context.Context) *Compiled[genState] {
	t.Helper()
	g := New[genState]()
	g.AddNode("ask", func(ctx context.Context, _ genState) (Update[genState], error) {
		*kept = ctx
		if _, err := Generate(ctx, m, &model.Request{Messages: model.Messages{model.User("hi")}}); err != nil {
			return Update[genState]{}, err
		}
		return Update[genState]{}, nil
	})
	g.AddEdge(START, "ask")
	g.AddEdge("ask", END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A task context a node keeps keeps its scope (and the scopes allocated
// with it), but the scope holds no outcome of its streamed model call
// once the call returned: neither its response nor its error.
func TestKeptScopeHoldsNoResponse(t *testing.T) {
	fail := errors.New("provider down")
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
		want  error
	}{
		{"response", llmtest.Text("a reply of several words"), nil},
		{"error", llmtest.Fail(fail), fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var kept context.Context
			c := keptScopeGraph(t, llmtest.New(tc.reply), &kept)
			chunks := 0
			var runErr error
			for ev, err := range c.Stream(context.Background(), genState{}, WithModes(StreamMessages)) {
				if err != nil {
					runErr = err
					break
				}
				if _, ok := ev.Chunk(); ok {
					chunks++
				}
			}
			if !errors.Is(runErr, tc.want) {
				t.Fatalf("run ended with %v, want %v", runErr, tc.want)
			}
			if tc.want == nil && chunks == 0 {
				t.Fatal("the model's reply was not streamed")
			}
			sc, _ := scopeOf(kept)
			if sc == nil {
				t.Fatal("the kept context holds no scope")
			}
			if !sc.genTaken.Load() {
				t.Fatal("the call did not use the scope's generation")
			}
			if sc.gen.resp != nil || sc.gen.err != nil {
				t.Fatalf("after the call returned, its scope holds response %v and error %v", sc.gen.resp, sc.gen.err)
			}
		})
	}
}

// lateModel streams one text chunk and its final response, and keeps the
// yield function, which a test calls after the call returned.
type lateModel struct {
	yield func(model.Chunk, error) bool
}

func (m *lateModel) Generate(context.Context, *model.Request) (*model.Response, error) {
	return &model.Response{Message: model.Assistant("done")}, nil
}

func (m *lateModel) Stream(context.Context, *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		m.yield = yield
		if yield(model.Chunk{Kind: model.ChunkText, Text: "done"}, nil) {
			yield(model.Chunk{Kind: model.ChunkDone, Response: &model.Response{Message: model.Assistant("done")}}, nil)
		}
	}
}

// A model that yields after its call returned is told to stop, and its
// chunk goes nowhere, although the call's outcome left the scope.
func TestLateYieldAfterGenerateStops(t *testing.T) {
	m := &lateModel{}
	var kept context.Context
	c := keptScopeGraph(t, m, &kept)
	chunks := 0
	for ev, err := range c.Stream(context.Background(), genState{}, WithModes(StreamMessages)) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.Chunk(); ok {
			chunks++
		}
	}
	if chunks != 2 {
		t.Fatalf("%d chunks streamed, want 2", chunks)
	}
	if m.yield(model.Chunk{Kind: model.ChunkText, Text: "late"}, nil) {
		t.Fatal("a yield after the call returned was not told to stop")
	}
	if m.yield(model.Chunk{Kind: model.ChunkDone, Response: &model.Response{}}, nil) {
		t.Fatal("a final chunk after the call returned was not told to stop")
	}
	if sc, _ := scopeOf(kept); sc.gen.resp != nil || sc.gen.err != nil {
		t.Fatalf("a late yield set the scope's outcome: response %v, error %v", sc.gen.resp, sc.gen.err)
	}
}
