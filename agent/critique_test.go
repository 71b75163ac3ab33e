package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestReviewValidate(t *testing.T) {
	tests := []struct {
		name string
		r    agent.Review
		want []string
	}{
		{"approved", agent.Review{Verdict: agent.VerdictApproved, Critique: "ok"}, nil},
		{"fixed", agent.Review{Verdict: agent.VerdictFixed, Critique: "noise", FixedOutput: "49"}, nil},
		{"fixed without output", agent.Review{Verdict: agent.VerdictFixed, Critique: "noise", FixedOutput: " "},
			[]string{"fixed_output: fixed_output is required when verdict is FIXED: give the corrected output"}},
		{"rejected", agent.Review{Verdict: agent.VerdictRejected, Critique: "wrong", Feedback: "use N/100*M"}, nil},
		{"rejected without feedback", agent.Review{Verdict: agent.VerdictRejected, Critique: "wrong"},
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
	ok, err := agent.CritiquePrompt(agent.CritiqueInput{
		Task:   "Find what the Team plan costs",
		Call:   `search_knowledge {"query":"Team plan price"}`,
		Output: "Team costs $49 per editor per month.\nForecast is a $15 add-on.",
		// Attempt 1 of 3: not the last.
		Attempt: 1, MaxAttempts: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := agent.CritiquePrompt(agent.CritiqueInput{
		Task: "Calculate 15% of 240", Call: `calculate {"expression":"15% of 240"}`,
		Error: "unexpected token \"of\"", Attempt: 2, MaxAttempts: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "critique.prompt", []byte(ok+"\n\n----\n\n"+failed))
}

// TestReviewSchema pins the schema the model is shown: three verdicts,
// and no Fallback field.
func TestReviewSchema(t *testing.T) {
	got, err := agent.SchemaOf[agent.Review]()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "review.schema.json", got)
	if strings.Contains(string(got), "allback") {
		t.Error("the schema shows the Fallback field")
	}
}

func TestCritique(t *testing.T) {
	u := agent.TokenUsage{InputTokens: 100, OutputTokens: 10}
	reply := func(s string) llmtest.Reply { return llmtest.Reply{Text: s, Usage: u} }
	search := agent.CritiqueInput{Task: "Find what the Team plan costs", Call: `search_knowledge {"query":"Team"}`,
		Output: "Team costs $49 per editor per month. Unrelated passage.", Attempt: 1, MaxAttempts: 3}
	calc := agent.CritiqueInput{Task: "Calculate 15% of 240", Call: `calculate {"expression":"15% of 240"}`,
		Error: `unexpected token "of"`, Attempt: 1, MaxAttempts: 3}
	tests := []struct {
		name     string
		in       agent.CritiqueInput
		replies  []llmtest.Reply
		want     agent.Review
		calls    int
		feedback string // in the last prompt
	}{
		{
			name:    "approved",
			in:      search,
			replies: []llmtest.Reply{reply(`{"verdict":"APPROVED","critique":"gives the price"}`)},
			want:    agent.Review{Verdict: agent.VerdictApproved, Critique: "gives the price"},
			calls:   1,
		},
		{
			name:    "fixed",
			in:      search,
			replies: []llmtest.Reply{reply(`{"verdict":"FIXED","critique":"extra passage","fixed_output":"Team costs $49 per editor per month."}`)},
			want:    agent.Review{Verdict: agent.VerdictFixed, Critique: "extra passage", FixedOutput: "Team costs $49 per editor per month."},
			calls:   1,
		},
		{
			name:    "rejected",
			in:      calc,
			replies: []llmtest.Reply{reply(`{"verdict":"REJECTED","critique":"not arithmetic","feedback":"write N% of M as N/100*M"}`)},
			want:    agent.Review{Verdict: agent.VerdictRejected, Critique: "not arithmetic", Feedback: "write N% of M as N/100*M"},
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
			want:     agent.Review{Verdict: agent.VerdictFixed, Critique: "extra passage", FixedOutput: "Team costs $49."},
			calls:    3,
			feedback: "fixed_output is required when verdict is FIXED",
		},
		{
			name:    "failed step is not approved",
			in:      calc,
			replies: []llmtest.Reply{reply(`{"verdict":"APPROVED","critique":"looks right"}`)},
			want: agent.Review{Verdict: agent.VerdictRejected, Critique: "The step failed; looks right",
				Feedback: `The step failed: unexpected token "of"`},
			calls: 1,
		},
		{
			name:    "empty output is not fixed",
			in:      agent.CritiqueInput{Task: "Find the price"},
			replies: []llmtest.Reply{reply(`{"verdict":"FIXED","critique":"made one up","fixed_output":"$49"}`)},
			want: agent.Review{Verdict: agent.VerdictRejected, Critique: "The step failed; made one up",
				Feedback: "The step returned nothing."},
			calls: 1,
		},
		{
			name:    "fallback approves a success",
			in:      search,
			replies: []llmtest.Reply{reply(`APPROVED`), reply(`{"verdict":"OK"}`), reply(`{"verdict":"REJECTED","critique":"x"}`)},
			want:    agent.Review{Verdict: agent.VerdictApproved, Critique: "No valid critique; the step succeeded.", Fallback: true},
			calls:   3,
		},
		{
			name:    "fallback rejects a failure with its error",
			in:      calc,
			replies: []llmtest.Reply{reply(`no`), reply(`no`), reply(`no`)},
			want: agent.Review{Verdict: agent.VerdictRejected, Critique: "No valid critique; the step failed.",
				Feedback: `The step failed: unexpected token "of"`, Fallback: true},
			calls: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := llmtest.New(tt.replies...)
			got, usage, err := agent.Critique(context.Background(), newClient(t, agent.Config{Model: m}), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Critique() (-want +got):\n%s", diff)
			}
			calls := m.Calls()
			if len(calls) != tt.calls {
				t.Fatalf("model called %d times, want %d", len(calls), tt.calls)
			}
			if want := (agent.TokenUsage{InputTokens: 100 * tt.calls, OutputTokens: 10 * tt.calls}); usage.InputTokens != want.InputTokens || usage.OutputTokens != want.OutputTokens {
				t.Errorf("usage = %+v, want %d in and %d out", usage, want.InputTokens, want.OutputTokens)
			}
			if !strings.HasPrefix(calls[0].Prompt, agent.MarkerCritique) {
				t.Errorf("prompt does not start with the critique marker: %.60q", calls[0].Prompt)
			}
			if tt.feedback != "" && !strings.Contains(calls[len(calls)-1].Prompt, tt.feedback) {
				t.Errorf("last prompt lacks the feedback %q:\n%s", tt.feedback, calls[len(calls)-1].Prompt)
			}
		})
	}
}

func TestCritiqueErrors(t *testing.T) {
	if _, _, err := agent.Critique(context.Background(), newClient(t, agent.Config{Model: llmtest.New()}), agent.CritiqueInput{Output: "x"}); err == nil ||
		!strings.Contains(err.Error(), "CritiqueInput.Task is empty") {
		t.Errorf("empty task: err = %v, want one naming CritiqueInput.Task", err)
	}
	boom := errors.New("boom: invalid api key")
	m := llmtest.New(llmtest.Fail(boom))
	_, _, err := agent.Critique(context.Background(), newClient(t, agent.Config{Model: m}), agent.CritiqueInput{Task: "t", Output: "o"})
	if !errors.Is(err, boom) {
		t.Errorf("failing model: err = %v, want %v", err, boom)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = agent.Critique(ctx, newClient(t, agent.Config{Model: llmtest.New().Default(llmtest.Text("no"))}), agent.CritiqueInput{Task: "t", Output: "o"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v, want context.Canceled", err)
	}
}

func TestCritiqueLogsFallback(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	m := llmtest.New().Default(llmtest.Text(`{"verdict":"REJECTED","critique":"x"}`))
	c := newClient(t, agent.Config{Model: m, Logger: zap.New(core)})
	r, _, err := agent.Critique(context.Background(), c, agent.CritiqueInput{Task: "t", Output: "o"})
	if err != nil || !r.Fallback {
		t.Fatalf("Critique() = %+v, %v; want the fallback", r, err)
	}
	var msgs []string
	for _, e := range logs.All() {
		msgs = append(msgs, e.Message)
	}
	want := []string{"structured reply rejected", "structured reply rejected", "structured reply rejected",
		"no valid critique; judging by the step's status"}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func TestFallbackReview(t *testing.T) {
	tests := []struct {
		in   agent.CritiqueInput
		want agent.Verdict
		fb   string
	}{
		{agent.CritiqueInput{Task: "t", Output: "49"}, agent.VerdictApproved, ""},
		{agent.CritiqueInput{Task: "t", Output: "partial", Error: "timeout"}, agent.VerdictRejected, "The step failed: timeout"},
		{agent.CritiqueInput{Task: "t", Output: " \n"}, agent.VerdictRejected, "The step returned nothing."},
	}
	for _, tt := range tests {
		got := agent.FallbackReview(tt.in)
		if got.Verdict != tt.want || got.Feedback != tt.fb || !got.Fallback || got.Validate() != nil {
			t.Errorf("FallbackReview(%+v) = %+v; want %s with feedback %q, Fallback set, valid", tt.in, got, tt.want, tt.fb)
		}
	}
}
