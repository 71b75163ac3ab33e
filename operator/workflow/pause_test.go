package workflow_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/workflow"
	"github.com/google/go-cmp/cmp"
)

type publishState struct{ Outcome string }

var publishOutcome = graph.Replace(func(s *publishState) *string { return &s.Outcome })

// An operator's question pauses a durable graph run and the answer given
// on resume reaches it; the registry neither retries the paused operator
// nor runs its fallback.
func TestInterruptElicitor(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	var attempts, fallbacks atomic.Int32
	err := reg.Register(operator.Metadata{Name: "publisher", Description: "Publishes after asking", Type: operator.PureLLM,
		MaxRetries: 2, Fallback: "fallback", Capabilities: operator.Capabilities{Elicitation: true}},
		func(operator.Deps) (operator.Operator, error) {
			return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				attempts.Add(1)
				ok, err := oc.Messenger.Confirm(ctx, "publish the report?")
				if err != nil {
					return nil, err
				}
				if !ok {
					return &operator.Result{Output: "kept"}, nil
				}
				return &operator.Result{Output: "published"}, nil
			}), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	err = reg.Register(operator.Metadata{Name: "fallback", Description: "Fails over", Type: operator.PureLLM},
		func(operator.Deps) (operator.Operator, error) {
			return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				fallbacks.Add(1)
				return &operator.Result{Output: "fallback"}, nil
			}), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[publishState]()
	g.AddNode("publish", func(ctx context.Context, _ publishState) (graph.Update[publishState], error) {
		oc := &operator.Context{Messenger: operator.NewMessenger(operator.Metadata{}, nil, workflow.InterruptElicitor{})}
		res, _, err := reg.Execute(ctx, "publisher", oc)
		if err != nil {
			return graph.Update[publishState]{}, err
		}
		return publishOutcome.Set(res.Text()), nil
	})
	g.AddEdge(graph.START, "publish").AddEdge("publish", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "report-1"})

	_, err = app.Invoke(ctx, publishState{})
	var pause *graph.InterruptError
	if !errors.As(err, &pause) || len(pause.Interrupts) != 1 {
		t.Fatalf("first run error = %v, want a *graph.InterruptError with one interrupt", err)
	}
	var req elicit.Request
	if err := pause.Interrupts[0].Decode(&req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(elicit.Request{ElicitationID: req.ElicitationID, Tool: "publisher", Message: "publish the report?", Options: []string{"yes", "no"}}, req); diff != "" || !strings.HasPrefix(req.ElicitationID, "elicit-") {
		t.Errorf("question (-want +got):\n%s", diff)
	}
	if a, f := attempts.Load(), fallbacks.Load(); a != 1 || f != 0 {
		t.Errorf("%d attempts and %d fallbacks before the answer, want 1 and 0: a pause is neither retried nor failed over", a, f)
	}
	got, err := app.Invoke(ctx, publishState{}, graph.Resume(elicit.Response{ElicitationID: req.ElicitationID, Action: elicit.Accept, Content: map[string]any{"answer": "yes"}}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Outcome != "published" || attempts.Load() != 2 || fallbacks.Load() != 0 {
		t.Errorf("outcome %q after %d attempts and %d fallbacks, want published after 2 and 0", got.Outcome, attempts.Load(), fallbacks.Load())
	}
}

func TestInterruptElicitorAnswer(t *testing.T) {
	var asked atomic.Int32
	g := graph.New[publishState]()
	g.AddNode("ask", func(ctx context.Context, _ publishState) (graph.Update[publishState], error) {
		asked.Add(1)
		m := operator.NewMessenger(operator.Metadata{Name: "picker", Capabilities: operator.Capabilities{Elicitation: true}}, nil, workflow.InterruptElicitor{})
		choice, err := m.Choose(ctx, "which plan?", []string{"pro", "team"})
		if err != nil {
			return graph.Update[publishState]{}, err
		}
		return publishOutcome.Set(choice), nil
	})
	g.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "plan-1"})
	if _, err := app.Invoke(ctx, publishState{}); !errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("first run error = %v, want graph.ErrInterrupted", err)
	}
	// A resume value of the wrong type fails the node with a message
	// saying what to resume with; the thread stays paused.
	_, err = app.Invoke(ctx, publishState{}, graph.Resume("team"))
	if err == nil || !strings.Contains(err.Error(), "resume with an elicit.Response") {
		t.Errorf("resume with a string: error = %v, want one asking for an elicit.Response", err)
	}
	got, err := app.Invoke(ctx, publishState{}, graph.Resume(elicit.Response{Action: elicit.Accept, Content: map[string]any{"answer": "team"}}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Outcome != "team" || asked.Load() != 3 {
		t.Errorf("outcome %q after %d runs of the node, want team after 3 (asking, the bad answer, the good one)", got.Outcome, asked.Load())
	}
}

func TestInterruptElicitorOutsideDurableRun(t *testing.T) {
	m := operator.NewMessenger(operator.Metadata{Name: "asker", Capabilities: operator.Capabilities{Elicitation: true}}, nil, workflow.InterruptElicitor{})
	_, err := m.Confirm(context.Background(), "go on?")
	if !errors.Is(err, graph.ErrNoCheckpointer) || errors.Is(err, operator.ErrPaused) {
		t.Errorf("Confirm outside a durable run: error = %v, want graph.ErrNoCheckpointer and not ErrPaused", err)
	}
}
