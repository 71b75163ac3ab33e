package operator_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	"github.com/google/go-cmp/cmp"
)

func meta(name string) operator.Metadata {
	return operator.Metadata{Name: name, Description: "does " + name, Type: operator.PureLLM}
}

func factory(f operator.Func) operator.Factory {
	return func(operator.Deps) (operator.Operator, error) { return f, nil }
}

func echo(prefix string) operator.Func {
	return func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: prefix + oc.Query}, nil
	}
}

func failing(err error) operator.Func {
	return func(ctx context.Context, oc *operator.Context) (*operator.Result, error) { return nil, err }
}

func TestRegister(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	if err := reg.Register(meta("b"), factory(echo(""))); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(meta("a"), factory(echo(""))); err != nil {
		t.Fatal(err)
	}
	err := reg.Register(meta("a"), factory(echo("")))
	if !errors.Is(err, operator.ErrDuplicate) || err.Error() != `operator: name already registered: "a"; pick another name or use a separate Registry` {
		t.Errorf("duplicate: %v", err)
	}
	_, _, err = reg.New("c")
	var unknown *operator.UnknownError
	if !errors.As(err, &unknown) || !errors.Is(err, operator.ErrUnknown) {
		t.Fatalf("unknown: %v", err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, unknown.Registered); diff != "" {
		t.Errorf("registered (-want +got):\n%s", diff)
	}
	if want := `operator: unknown operator "c"; registered: a, b`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// A separate registry is independent.
	other := operator.NewRegistry(operator.Deps{})
	if other.Has("a") || !reg.Has("a") {
		t.Error("registries share entries")
	}
}

func TestRegisterInvalid(t *testing.T) {
	tests := []struct {
		name string
		m    operator.Metadata
		want string
	}{
		{"no name", operator.Metadata{Description: "d", Type: operator.PureLLM}, "operator: Metadata.Name is empty; give the operator a unique name"},
		{"bad name", operator.Metadata{Name: "a b", Description: "d", Type: operator.PureLLM}, `operator: "a b": Metadata.Name may hold only letters, digits, '_', '-' and '.'`},
		{"no description", operator.Metadata{Name: "a", Type: operator.PureLLM}, `operator: "a": Metadata.Description is empty; say in a sentence what the operator does`},
		{"bad type", operator.Metadata{Name: "a", Description: "d", Type: "llm"}, `operator: "a": Metadata.Type "llm" is not one of pure_llm, mcp_backed, hybrid`},
		{"self fallback", operator.Metadata{Name: "a", Description: "d", Type: operator.Hybrid, Fallback: "a"}, `operator: "a": Metadata.Fallback names the operator itself`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := operator.NewRegistry(operator.Deps{}).Register(tt.m, factory(echo("")))
			var me *operator.MetadataError
			if !errors.As(err, &me) || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestRegistryConcurrent(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := range 40 {
		wg.Go(func() {
			errs[i] = reg.Register(meta(fmt.Sprint("op", i%20)), factory(echo("")))
			reg.Names()
			_, _, _ = reg.Execute(context.Background(), fmt.Sprint("op", i%20), &operator.Context{})
		})
	}
	wg.Wait()
	dups := 0
	for _, err := range errs {
		if errors.Is(err, operator.ErrDuplicate) {
			dups++
		} else if err != nil {
			t.Error(err)
		}
	}
	if dups != 20 || len(reg.Names()) != 20 {
		t.Errorf("%d duplicates and %d names, want 20 and 20", dups, len(reg.Names()))
	}
}

// Operators join the default registry from init, as a package of
// operators would.
func init() {
	operator.MustRegister(meta("default_test_op"), factory(echo("d:")))
}

func TestDefaultRegistry(t *testing.T) {
	res, _, err := operator.Default().Execute(context.Background(), "default_test_op", &operator.Context{Query: "q"})
	if err != nil || res.Output != "d:q" {
		t.Fatalf("Execute = %v, %v", res, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustRegister of a duplicate did not panic")
		}
	}()
	operator.MustRegister(meta("default_test_op"), factory(echo("")))
}

func TestFallback(t *testing.T) {
	first, second := errors.New("first broke"), errors.New("second broke")
	tests := []struct {
		name     string
		ops      map[string]operator.Func
		fallback map[string]string
		retries  int
		run      string
		want     string
		wantErrs []error
		calls    map[string]int
	}{
		{
			name:  "success needs no fallback",
			ops:   map[string]operator.Func{"a": echo("a:"), "b": echo("b:")},
			run:   "a",
			want:  "a:q",
			calls: map[string]int{"a": 1},
		},
		{
			name:     "fallback succeeds",
			ops:      map[string]operator.Func{"a": failing(first), "b": echo("b:")},
			fallback: map[string]string{"a": "b"},
			run:      "a",
			want:     "b:q",
			calls:    map[string]int{"a": 1, "b": 1},
		},
		{
			name:     "both fail, both errors kept",
			ops:      map[string]operator.Func{"a": failing(first), "b": failing(second)},
			fallback: map[string]string{"a": "b"},
			run:      "a",
			wantErrs: []error{first, second},
			calls:    map[string]int{"a": 1, "b": 1},
		},
		{
			name:     "fallback runs once, not its own fallback",
			ops:      map[string]operator.Func{"a": failing(first), "b": failing(second), "c": echo("c:")},
			fallback: map[string]string{"a": "b", "b": "c"},
			run:      "a",
			wantErrs: []error{first, second},
			calls:    map[string]int{"a": 1, "b": 1},
		},
		{
			name:     "retries before the fallback",
			ops:      map[string]operator.Func{"a": failing(first), "b": echo("b:")},
			fallback: map[string]string{"a": "b"},
			retries:  2,
			run:      "a",
			want:     "b:q",
			calls:    map[string]int{"a": 3, "b": 1},
		},
		{
			name:     "permanent errors are not retried",
			ops:      map[string]operator.Func{"a": failing(operator.Permanent(first))},
			retries:  2,
			run:      "a",
			wantErrs: []error{first},
			calls:    map[string]int{"a": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := operator.NewRegistry(operator.Deps{})
			var mu sync.Mutex
			calls := map[string]int{}
			for name, f := range tt.ops {
				m := meta(name)
				m.Fallback = tt.fallback[name]
				m.MaxRetries = tt.retries
				err := reg.Register(m, factory(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
					mu.Lock()
					calls[name]++
					mu.Unlock()
					return f(ctx, oc)
				}))
				if err != nil {
					t.Fatal(err)
				}
			}
			res, _, err := reg.Execute(context.Background(), tt.run, &operator.Context{Query: "q"})
			if tt.wantErrs == nil {
				if err != nil || res.Output != tt.want {
					t.Fatalf("Execute = %v, %v; want %q", res, err, tt.want)
				}
			} else {
				for _, want := range tt.wantErrs {
					if !errors.Is(err, want) {
						t.Errorf("error %v does not wrap %v", err, want)
					}
				}
				if len(tt.wantErrs) == 2 {
					var fe *operator.FallbackError
					if !errors.As(err, &fe) || fe.Operator != "a" || fe.Fallback != "b" {
						t.Errorf("error %v is not a FallbackError from a to b", err)
					}
				}
			}
			if diff := cmp.Diff(tt.calls, calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNeedsMCP(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	m := meta("search")
	m.Type = operator.MCPBacked
	if err := reg.Register(m, factory(echo(""))); err != nil {
		t.Fatal(err)
	}
	_, _, err := reg.Execute(context.Background(), "search", &operator.Context{})
	if !errors.Is(err, operator.ErrNeedsMCP) {
		t.Errorf("Execute without tools: %v, want ErrNeedsMCP", err)
	}
}

func TestMessenger(t *testing.T) {
	rec := &recorder{}
	table := operator.NewElicitations(rec)
	reg := operator.NewRegistry(operator.Deps{})
	m := meta("reporter")
	m.Capabilities = operator.Capabilities{Progress: true, Elicitation: true, DirectResponse: true,
		OutputTypes: []operator.OutputType{operator.OutputText, operator.OutputWidget}}
	var confirmed bool
	var chosen string
	err := reg.Register(m, factory(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		msg := oc.Messenger
		if err := msg.Progress(ctx, 0.5, "halfway"); err != nil {
			return nil, err
		}
		if err := msg.Content(ctx, toolresult.Content{MIMEType: "text/markdown", Text: "## notes"}, false); err != nil {
			return nil, err
		}
		if err := msg.Widget(ctx, toolresult.Widget{Type: "chart", Title: "Revenue"}); err != nil {
			return nil, err
		}
		var err error
		if confirmed, err = msg.Confirm(ctx, "Proceed?"); err != nil {
			return nil, err
		}
		if chosen, err = msg.Choose(ctx, "Format?", []string{"JSON", "CSV"}); err != nil {
			return nil, err
		}
		if err := msg.Content(ctx, toolresult.TextContent("Done: "+chosen), true); err != nil {
			return nil, err
		}
		return &operator.Result{Output: "ok", Direct: true}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	// The client answers each question as it arrives, as a browser would
	// through the elicitation endpoint.
	answers := map[string]map[string]any{"Proceed?": {"answer": true}, "Format?": {"answer": "CSV"}}
	rec.on = func(r operator.Report) {
		if q, ok := r.(elicit.Request); ok {
			if err := table.Respond(elicit.Response{ElicitationID: q.ElicitationID, Action: elicit.Accept, Content: answers[q.Message]}); err != nil {
				t.Error(err)
			}
		}
	}
	res, _, err := reg.Execute(context.Background(), "reporter", &operator.Context{Messenger: operator.NewMessenger(operator.Metadata{}, rec, table)})
	if err != nil {
		t.Fatal(err)
	}
	if !confirmed || chosen != "CSV" || !res.Direct {
		t.Errorf("confirmed=%v chosen=%q direct=%v", confirmed, chosen, res.Direct)
	}
	want := []string{
		"progress reporter 0.5 halfway",
		`output reporter text/markdown "## notes"`,
		`output reporter application/vnd.mcp.widget+json {"widget_type":"chart","title":"Revenue"}`,
		`question reporter "Proceed?" ["yes" "no"]`,
		`question reporter "Format?" ["JSON" "CSV"]`,
		"direct reporter text/plain Done: CSV",
	}
	if diff := cmp.Diff(want, rec.lines()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

func TestMessengerCapabilities(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	msg := operator.NewMessenger(meta("plain"), rec, operator.NewElicitations(rec))
	checks := map[string]error{
		"progress": msg.Progress(ctx, 0.1, "x"),
		"direct":   msg.Content(ctx, toolresult.TextContent("x"), true),
		"widget":   msg.Widget(ctx, toolresult.Widget{Type: "chart"}),
		"confirm":  func() error { _, err := msg.Confirm(ctx, "ok?"); return err }(),
		"choose":   func() error { _, err := msg.Choose(ctx, "which?", []string{"a"}); return err }(),
	}
	for name, err := range checks {
		var ce *operator.CapabilityError
		if !errors.As(err, &ce) || ce.Operator != "plain" {
			t.Errorf("%s without the capability: %v, want a CapabilityError", name, err)
		}
	}
	if err := msg.Content(ctx, toolresult.TextContent("fine"), false); err != nil {
		t.Errorf("plain content: %v", err)
	}
	var nilMsg *operator.Messenger
	if err := nilMsg.Progress(ctx, 1, "x"); err != nil {
		t.Errorf("nil messenger progress: %v", err)
	}
	if _, err := nilMsg.Confirm(ctx, "x"); !errors.Is(err, operator.ErrNoElicitor) {
		t.Errorf("nil messenger confirm: %v, want ErrNoElicitor", err)
	}
}

func TestElicitationsCancel(t *testing.T) {
	el := operator.NewElicitations(nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := el.Elicit(ctx, elicit.Request{ElicitationID: "x", Message: "m"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Elicit on a cancelled context: %v", err)
	}
	if err := el.Respond(elicit.Response{ElicitationID: "x", Action: elicit.Accept}); !errors.Is(err, operator.ErrNoQuestion) {
		t.Errorf("Respond without a question: %v", err)
	}
}

func TestMessengerStream(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	m := meta("streamer")
	m.Capabilities = operator.Capabilities{Streaming: true, DirectResponse: true}
	st, err := operator.NewMessenger(m, rec, nil).Stream(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"Based on ", "the docs"} {
		if err := st.Write(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Write(ctx, "late"); err == nil {
		t.Error("Write after Close succeeded")
	}
	want := []string{
		"direct.start streamer text/markdown",
		`direct.chunk streamer "Based on "`,
		`direct.chunk streamer "the docs"`,
		"direct.done streamer",
	}
	if diff := cmp.Diff(want, rec.lines()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

func TestCheckFallbacks(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	m := meta("a")
	m.Fallback = "ghost"
	if err := reg.Register(m, factory(echo(""))); err != nil {
		t.Fatal(err)
	}
	if err := reg.Check(); err == nil || err.Error() != `operator: "a": Metadata.Fallback names "ghost", which is not registered` {
		t.Errorf("Check = %v", err)
	}
	if err := reg.Register(meta("ghost"), factory(echo(""))); err != nil {
		t.Fatal(err)
	}
	if err := reg.Check(); err != nil {
		t.Errorf("Check after registering the fallback: %v", err)
	}
}

// Two bots share one catalogue of operators with different models.
func TestWithDeps(t *testing.T) {
	base := operator.NewRegistry(operator.Deps{})
	err := base.Register(operator.Metadata{Name: "who", Description: "names its model", Type: operator.PureLLM, Model: "m"},
		func(d operator.Deps) (operator.Operator, error) {
			m, err := d.Model("m")
			if err != nil {
				return nil, err
			}
			return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				resp, err := m.Generate(ctx, &model.Request{Messages: []model.Message{model.User("who are you?")}})
				if err != nil {
					return nil, err
				}
				return &operator.Result{Output: resp.Text()}, nil
			}), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	botA := base.WithDeps(operator.Deps{Models: operator.OneModel(llmtest.New().Default(llmtest.Text("model A")))})
	botB := base.WithDeps(operator.Deps{Models: operator.OneModel(llmtest.New().Default(llmtest.Text("model B")))})
	for bot, want := range map[*operator.Registry]string{botA: "model A", botB: "model B"} {
		res, _, err := bot.Execute(context.Background(), "who", nil)
		if err != nil || res.Output != want {
			t.Errorf("Execute = %v, %v; want %q", res, err, want)
		}
	}
	if _, _, err := base.Execute(context.Background(), "who", nil); !errors.Is(err, operator.ErrNoModel) {
		t.Errorf("base registry without models: %v", err)
	}
	if err := botA.Register(meta("only_a"), factory(echo(""))); err != nil || botB.Has("only_a") || base.Has("only_a") {
		t.Errorf("registering in one bot's registry reached another: %v", err)
	}
}
