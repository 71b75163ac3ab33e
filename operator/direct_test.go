package operator_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// An operator that answers the user through its Messenger (a direct
// content item or a stream) has Result.Direct set by the registry, and
// the provider's ToolResult carries it, so that a caller does not write a
// second answer; an operator that only returns its output does not.
func TestDirectResponseReachesTheCaller(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	for name, send := range map[string]func(context.Context, *operator.Messenger) error{
		"answers": func(ctx context.Context, m *operator.Messenger) error {
			return m.Content(ctx, toolresult.TextContent("Here is your result."), true)
		},
		"streams": func(ctx context.Context, m *operator.Messenger) error {
			s, err := m.Stream(ctx, "")
			if err != nil {
				return err
			}
			if err := s.Write(ctx, "Here is "); err != nil {
				return err
			}
			return s.Close(ctx)
		},
		"quiet": func(ctx context.Context, m *operator.Messenger) error {
			return m.Content(ctx, toolresult.TextContent("a note, not the answer"), false)
		},
	} {
		m := meta(name)
		m.Capabilities = operator.Capabilities{DirectResponse: true, Streaming: true}
		err := reg.Register(m, factory(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
			if err := send(ctx, oc.Messenger); err != nil {
				return nil, err
			}
			return &operator.Result{Output: "done"}, nil
		}))
		if err != nil {
			t.Fatal(err)
		}
	}
	p := operator.NewProvider(operator.ProviderConfig{Operators: reg})
	for name, want := range map[string]bool{"answers": true, "streams": true, "quiet": false} {
		discard := operator.ReporterFunc(func(context.Context, operator.Report) error { return nil })
		res, err := p.Execute(t.Context(), name, map[string]any{"query": "q"}, operator.Env{Reporter: discard})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Direct != want {
			t.Errorf("%s: ToolResult.Direct = %v, want %v", name, res.Direct, want)
		}
		oc := &operator.Context{Query: "q", Messenger: operator.NewMessenger(operator.Metadata{}, discard, nil)}
		r, _, err := reg.Execute(t.Context(), name, oc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Direct != want {
			t.Errorf("%s: Result.Direct = %v, want %v", name, r.Direct, want)
		}
		// Without a reporter the direct response reaches no one.
		r, _, err = reg.Execute(t.Context(), name, &operator.Context{Query: "q"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Direct {
			t.Errorf("%s without a reporter: Result.Direct = true, want false", name)
		}
	}
}

// A direct response of a failed attempt does not mark the result of the
// retry that succeeds without one.
func TestDirectResetPerAttempt(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	m := meta("flaky")
	m.Capabilities = operator.Capabilities{DirectResponse: true}
	m.MaxRetries = 1
	calls := 0
	err := reg.Register(m, factory(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		calls++
		if calls == 1 {
			if err := oc.Messenger.Content(ctx, toolresult.TextContent("half an answer"), true); err != nil {
				return nil, err
			}
			return nil, errors.New("lost the connection")
		}
		return &operator.Result{Output: "done"}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	discard := operator.ReporterFunc(func(context.Context, operator.Report) error { return nil })
	oc := &operator.Context{Query: "q", Messenger: operator.NewMessenger(operator.Metadata{}, discard, nil)}
	r, _, err := reg.Execute(t.Context(), "flaky", oc)
	if err != nil || calls != 2 {
		t.Fatalf("Execute = %v after %d calls, want nil after 2", err, calls)
	}
	if r.Direct {
		t.Error("Result.Direct = true after a retry that sent no direct response")
	}
}
