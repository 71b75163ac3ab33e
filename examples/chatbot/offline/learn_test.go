package offline_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/supervisor"
	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/memory"
)

// learnFrom runs cognition's LLMLearner on the offline model, served over
// the OpenAI wire protocol as the chatbot serves it, so that the forced
// function call, the schema and the validation run as with a provider.
func learnFrom(t *testing.T, outcome cognition.Outcome, user ...string) cognition.Learning {
	t.Helper()
	m := offline.New(offline.Config{})
	c, err := agent.New(agent.Config{
		OpenAI:       &agent.OpenAIConfig{BaseURL: "http://offline.invalid/v1", APIKey: "offline"},
		HTTPClient:   &http.Client{Transport: m.Transport()},
		DefaultModel: "openai:" + m.Name(),
	})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []memory.Message
	for _, u := range user {
		msgs = append(msgs, memory.Message{Role: memory.RoleUser, Content: u},
			memory.Message{Role: memory.RoleAssistant, Content: "My name is Offline and I prefer long answers."})
	}
	l, err := (&cognition.LLMLearner{Model: c}).Learn(context.Background(), cognition.LearnInput{
		Interaction: cognition.Interaction{UserID: "u1", Messages: msgs, Outcome: outcome}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The offline model recognises LLMLearner's prompt and extracts, from the
// user's messages only (not the assistant's), a stated name, a preference
// and its style, what the user works on, and the expertise; each stated
// fact is an episode too.
func TestLearnerPromptExtractsFacts(t *testing.T) {
	l := learnFrom(t, cognition.Success,
		"Hi, my name is Ada and I prefer short answers.",
		"I'm a beginner. I work on payment systems in Go!")
	want := cognition.ProfileUpdate{
		Expertise:   cognition.Novice,
		Style:       cognition.Concise,
		Interests:   []string{"payment", "systems", "go"},
		Preferences: map[string]string{"name": "Ada", "answers": "short answers", "work": "on payment systems in Go"},
	}
	if diff := cmp.Diff(want, l.Profile); diff != "" {
		t.Errorf("profile (-want +got):\n%s", diff)
	}
	var summaries []string
	for _, e := range l.Episodes {
		summaries = append(summaries, e.Summary)
		if e.Importance <= 0 || e.Importance > 1 || len(e.Topics) == 0 {
			t.Errorf("episode %+v: want topics and an importance in (0, 1]", e)
		}
	}
	if diff := cmp.Diff([]string{"The user's name is Ada.", "The user works on payment systems in Go."}, summaries); diff != "" {
		t.Errorf("episodes (-want +got):\n%s", diff)
	}
	if len(l.Gaps) != 0 {
		t.Errorf("gaps %q from a successful turn", l.Gaps)
	}
}

// A turn that says nothing about the user teaches nothing; a failed one
// is a knowledge gap.
func TestLearnerPromptNothingToLearn(t *testing.T) {
	l := learnFrom(t, cognition.Success, "How much does the Team plan cost?")
	if diff := cmp.Diff(cognition.Learning{Episodes: []cognition.EpisodeDraft{}}, l); diff != "" {
		t.Errorf("learning (-want +got):\n%s", diff)
	}
	l = learnFrom(t, cognition.Failure, "What is the weather on Mars today?")
	if len(l.Gaps) != 1 || !strings.Contains(l.Gaps[0], "weather") || !strings.Contains(l.Gaps[0], "mars") {
		t.Errorf("gaps %q, want one about the weather on mars", l.Gaps)
	}
}

// The supervisor answers a question about the user from the user profile
// in its Conversation section, and acknowledges a user telling about
// themselves.
func TestSupervisorAnswersFromProfile(t *testing.T) {
	c, err := agent.New(agent.Config{Model: offline.New(offline.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	profile := "User profile:\n- Style preference: concise\n- Prefers answers: short answers\n- Prefers name: Ada"
	for _, tc := range []struct {
		query, context string
		want           []string
	}{
		{"What is my name?", profile, []string{"Your name is Ada."}},
		{"What do you know about me?", profile, []string{"your name is Ada", "Style preference: concise"}},
		{"What is my name?", "", []string{"I don't know anything about you yet"}},
		{"My name is Ada and I prefer short answers.", "", []string{"Nice to meet you, Ada!", "I'll keep my answers short."}},
	} {
		dres, err := supervisor.Decide(ctx, c, supervisor.DecideInput{Query: tc.query, Context: tc.context, Iteration: 1, MaxIterations: 3,
			Tools: []model.ToolDef{{Name: "search_knowledge", Description: "Searches the knowledge base"}}})
		d := dres.Value
		if err != nil {
			t.Fatal(err)
		}
		if d.Action != supervisor.ActionAnswer {
			t.Errorf("%q: decision %+v, want an answer", tc.query, d)
		}
		for _, w := range tc.want {
			if !strings.Contains(d.Response, w) {
				t.Errorf("%q with context %q: response %q lacks %q", tc.query, tc.context, d.Response, w)
			}
		}
	}
}
