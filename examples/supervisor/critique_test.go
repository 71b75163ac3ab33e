package supervisor_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/examples/supervisor/supervisortest"
	"github.com/google/go-cmp/cmp"
)

func TestReviewValidate(t *testing.T) {
	tests := []struct {
		name string
		r    supervisor.Review
		want []string
	}{
		{"approved", supervisor.Review{Verdict: supervisor.VerdictApproved, Critique: "ok"}, nil},
		{"fixed", supervisor.Review{Verdict: supervisor.VerdictFixed, Critique: "noise", FixedOutput: "49"}, nil},
		{"fixed without output", supervisor.Review{Verdict: supervisor.VerdictFixed, Critique: "noise", FixedOutput: " "},
			[]string{"fixed_output: fixed_output is required when verdict is FIXED: give the corrected output"}},
		{"rejected", supervisor.Review{Verdict: supervisor.VerdictRejected, Critique: "wrong", Feedback: "use N/100*M"}, nil},
		{"rejected without feedback", supervisor.Review{Verdict: supervisor.VerdictRejected, Critique: "wrong"},
			[]string{"feedback: feedback is required when verdict is REJECTED: say what the next attempt must change"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, fieldErrors(tt.r.Validate())); diff != "" {
				t.Errorf("Validate() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCritiquePrompt(t *testing.T) {
	prompt := func(in supervisor.CritiqueInput) string {
		t.Helper()
		m := llmtest.New(llmtest.Text(`{"verdict":"REJECTED","critique":"c","feedback":"f"}`))
		if _, err := supervisor.Critique(context.Background(), m, in); err != nil {
			t.Fatal(err)
		}
		return m.Calls()[0].Prompt
	}
	ok := prompt(supervisor.CritiqueInput{
		Task:   "Find what the Team plan costs",
		Call:   `search_knowledge {"query":"Team plan price"}`,
		Output: "Team costs $49 per editor per month.\nForecast is a $15 add-on.",
		// Attempt 1 of 3: not the last.
		Attempt: 1, MaxAttempts: 3,
	})
	failed := prompt(supervisor.CritiqueInput{
		Task: "Calculate 15% of 240", Call: `calculate {"expression":"15% of 240"}`,
		Error: "unexpected token \"of\"", Attempt: 2, MaxAttempts: 2,
	})
	golden(t, "critique.prompt", []byte(ok+"\n\n----\n\n"+failed))
}

// TestReviewSchema pins the schema the model is shown: three verdicts,
// and no Fallback field.
func TestReviewSchema(t *testing.T) {
	got, err := agent.SchemaOf[supervisor.Review]()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "review.schema.json", got)
	if strings.Contains(string(got), "allback") {
		t.Error("the schema shows the Fallback field")
	}
}

func TestCritique(t *testing.T) {
	u := model.Usage{InputTokens: 100, OutputTokens: 10}
	reply := func(s string) llmtest.Reply { return llmtest.Reply{Text: s, Usage: u} }
	search := supervisor.CritiqueInput{Task: "Find what the Team plan costs", Call: `search_knowledge {"query":"Team"}`,
		Output: "Team costs $49 per editor per month. Unrelated passage.", Attempt: 1, MaxAttempts: 3}
	calc := supervisor.CritiqueInput{Task: "Calculate 15% of 240", Call: `calculate {"expression":"15% of 240"}`,
		Error: `unexpected token "of"`, Attempt: 1, MaxAttempts: 3}
	tests := []struct {
		name     string
		in       supervisor.CritiqueInput
		replies  []llmtest.Reply
		want     supervisor.Review
		calls    int
		feedback string // in the last prompt
	}{
		{
			name:    "approved",
			in:      search,
			replies: []llmtest.Reply{reply(`{"verdict":"APPROVED","critique":"gives the price"}`)},
			want:    supervisor.Review{Verdict: supervisor.VerdictApproved, Critique: "gives the price"},
			calls:   1,
		},
		{
			name:    "fixed",
			in:      search,
			replies: []llmtest.Reply{reply(`{"verdict":"FIXED","critique":"extra passage","fixed_output":"Team costs $49 per editor per month."}`)},
			want:    supervisor.Review{Verdict: supervisor.VerdictFixed, Critique: "extra passage", FixedOutput: "Team costs $49 per editor per month."},
			calls:   1,
		},
		{
			name:    "rejected",
			in:      calc,
			replies: []llmtest.Reply{reply(`{"verdict":"REJECTED","critique":"not arithmetic","feedback":"write N% of M as N/100*M"}`)},
			want:    supervisor.Review{Verdict: supervisor.VerdictRejected, Critique: "not arithmetic", Feedback: "write N% of M as N/100*M"},
			calls:   1,
		},
		{
			name: "invalid then valid",
			in:   search,
			replies: []llmtest.Reply{
				reply(`Looks fine to me.`),
				reply(`{"verdict":"FIXED","critique":"extra passage"}`),
				reply("```json\n" + `{"verdict":"FIXED","critique":"extra passage","fixed_output":"Team costs $49."}` + "\n```"),
			},
			want:     supervisor.Review{Verdict: supervisor.VerdictFixed, Critique: "extra passage", FixedOutput: "Team costs $49."},
			calls:    3,
			feedback: "fixed_output is required when verdict is FIXED",
		},
		{
			name:    "failed step is not approved",
			in:      calc,
			replies: []llmtest.Reply{reply(`{"verdict":"APPROVED","critique":"looks right"}`)},
			want: supervisor.Review{Verdict: supervisor.VerdictRejected, Critique: "The step failed; looks right",
				Feedback: `The step failed: unexpected token "of"`},
			calls: 1,
		},
		{
			name:    "empty output is not fixed",
			in:      supervisor.CritiqueInput{Task: "Find the price"},
			replies: []llmtest.Reply{reply(`{"verdict":"FIXED","critique":"made one up","fixed_output":"$49"}`)},
			want: supervisor.Review{Verdict: supervisor.VerdictRejected, Critique: "The step failed; made one up",
				Feedback: "The step returned nothing."},
			calls: 1,
		},
		{
			name:    "fallback approves a success",
			in:      search,
			replies: []llmtest.Reply{reply(`APPROVED`), reply(`{"verdict":"OK"}`), reply(`{"verdict":"REJECTED","critique":"x"}`)},
			want:    supervisor.Review{Verdict: supervisor.VerdictApproved, Critique: "No valid critique; the step succeeded."},
			calls:   3,
		},
		{
			name:    "fallback rejects a failure with its error",
			in:      calc,
			replies: []llmtest.Reply{reply(`no`), reply(`no`), reply(`no`)},
			want: supervisor.Review{Verdict: supervisor.VerdictRejected, Critique: "No valid critique; the step failed.",
				Feedback: `The step failed: unexpected token "of"`},
			calls: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := llmtest.New(tt.replies...)
			res, err := supervisor.Critique(context.Background(), newClient(t, agent.Config{Model: m}), tt.in)
			got, usage := res.Value, res.Usage
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Critique() (-want +got):\n%s", diff)
			}
			if want := strings.HasPrefix(tt.name, "fallback"); res.Fallback != want {
				t.Errorf("Fallback = %v, want %v", res.Fallback, want)
			}
			calls := m.Calls()
			if len(calls) != tt.calls {
				t.Fatalf("model called %d times, want %d", len(calls), tt.calls)
			}
			if want := (model.Usage{InputTokens: 100 * tt.calls, OutputTokens: 10 * tt.calls}); usage.InputTokens != want.InputTokens || usage.OutputTokens != want.OutputTokens {
				t.Errorf("usage = %+v, want %d in and %d out", usage, want.InputTokens, want.OutputTokens)
			}
			if r, ok := supervisortest.Parse(calls[0].Prompt); !ok || r.Step != supervisortest.Critique {
				t.Errorf("prompt is not read as the critique step's: %.60q", calls[0].Prompt)
			}
			if tt.feedback != "" && !strings.Contains(calls[len(calls)-1].Prompt, tt.feedback) {
				t.Errorf("last prompt lacks the feedback %q:\n%s", tt.feedback, calls[len(calls)-1].Prompt)
			}
		})
	}
}

func TestCritiqueErrors(t *testing.T) {
	if _, err := supervisor.Critique(context.Background(), newClient(t, agent.Config{Model: llmtest.New()}), supervisor.CritiqueInput{Output: "x"}); err == nil ||
		!strings.Contains(err.Error(), "CritiqueInput.Task is empty") {
		t.Errorf("empty task: err = %v, want one naming CritiqueInput.Task", err)
	}
	boom := errors.New("boom: invalid api key")
	m := llmtest.New(llmtest.Fail(boom))
	_, err := supervisor.Critique(context.Background(), newClient(t, agent.Config{Model: m}), supervisor.CritiqueInput{Task: "t", Output: "o"})
	if !errors.Is(err, boom) {
		t.Errorf("failing model: err = %v, want %v", err, boom)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = supervisor.Critique(ctx, newClient(t, agent.Config{Model: llmtest.New().Default(llmtest.Text("no"))}), supervisor.CritiqueInput{Task: "t", Output: "o"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v, want context.Canceled", err)
	}
}

func TestFallbackReview(t *testing.T) {
	tests := []struct {
		in   supervisor.CritiqueInput
		want supervisor.Verdict
		fb   string
	}{
		{supervisor.CritiqueInput{Task: "t", Output: "49"}, supervisor.VerdictApproved, ""},
		{supervisor.CritiqueInput{Task: "t", Output: "partial", Error: "timeout"}, supervisor.VerdictRejected, "The step failed: timeout"},
		{supervisor.CritiqueInput{Task: "t", Output: " \n"}, supervisor.VerdictRejected, "The step returned nothing."},
	}
	for _, tt := range tests {
		got := supervisor.FallbackReview(tt.in)
		if got.Verdict != tt.want || got.Feedback != tt.fb || got.Validate() != nil {
			t.Errorf("FallbackReview(%+v) = %+v; want %s with feedback %q, valid", tt.in, got, tt.want, tt.fb)
		}
	}
}
