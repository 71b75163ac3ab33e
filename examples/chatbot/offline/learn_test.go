package offline_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/memory"
)

// learnFrom runs cognition's LLMLearner on the offline model, served over
// the OpenAI wire protocol as the chatbot serves it, so that the forced
// function call, the schema and the validation run as with a provider.
func learnFrom(t *testing.T, outcome cognition.Outcome, user ...string) cognition.Learning {
	t.Helper()
	m := offline.New(offline.Config{})
	c, err := agent.New(agent.Config{
		OpenAI:       &provider.OpenAIConfig{BaseURL: "http://offline.invalid/v1", APIKey: "offline"},
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
// and its style, what the user works on, and the expertise; each fact
// about the person is an episode too.
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
	want2 := []string{"The user's name is Ada.", "The user works on payment systems in Go."}
	if diff := cmp.Diff(want2, summaries); diff != "" {
		t.Errorf("episodes (-want +got):\n%s", diff)
	}
	if len(l.Gaps) != 0 {
		t.Errorf("gaps %q from a successful turn", l.Gaps)
	}
}

// The introduction: name, role, expertise and style, where the
// rules of the first demo learner kept only what the user works on.
func TestLearnerIntroduction(t *testing.T) {
	l := learnFrom(t, cognition.Success, "Hi, I'm Linus. I'm a data engineer… I mostly work on ETL pipelines; keep answers brief please")
	want := cognition.ProfileUpdate{
		Expertise: cognition.Intermediate, Style: cognition.Concise, Interests: []string{"etl", "pipelines"},
		Preferences: map[string]string{"name": "Linus", "role": "data engineer", "work": "on ETL pipelines"},
	}
	if diff := cmp.Diff(want, l.Profile); diff != "" {
		t.Errorf("profile (-want +got):\n%s", diff)
	}
}

// tuningIntroductions are the introductions the learner's rules were
// written against, several phrasings of each kind of fact. The held-out
// list (learn_heldout_test.go) measures what they do with others.
var tuningIntroductions = []learnCase{
	// names
	{say: []string{"My name is Grace Hopper."}, name: "Grace Hopper", role: "-"},
	{say: []string{"you can call me max"}, name: "Max"},
	{say: []string{"Hello, I am Aiko!"}, name: "Aiko"},
	{say: []string{"Hi all, this is Bruno from accounts"}, name: "Bruno"},
	{say: []string{"Dana here, quick one: what does the Team plan cost?"}, name: "Dana"},
	{say: []string{"I'm Not sure what to ask."}, name: "-"},
	{say: []string{"I'm interested in dashboards."}, name: "-", role: "-"},
	// roles
	{say: []string{"I work as a software engineer at Initech."}, role: "software engineer", org: "Initech"},
	{say: []string{"I'm a pharmacist."}, role: "pharmacist"},
	{say: []string{"As a teacher, I need simple explanations."}, role: "teacher"},
	{say: []string{"My role is CTO at a startup"}, role: "CTO"},
	{say: []string{"I am the head of data at Northwind"}, role: "head of data", org: "Northwind"},
	{say: []string{"I'm a big fan of your product"}, role: "-"},
	{say: []string{"I'm a bit lost here"}, role: "-"},
	{say: []string{"I work for Umbrella Corp as an analyst"}, org: "Umbrella Corp", role: "analyst"},
	{say: []string{"Hello, Mia here - senior nurse."}, name: "Mia", role: "senior nurse", expertise: cognition.Expert},
	{say: []string{"Thanks for the help. I'm Tom, a chef at Globex."}, name: "Tom", role: "chef", org: "Globex"},
	{say: []string{"I work at Initech. Keep it brief."}, org: "Initech", style: cognition.Concise},
	// expertise
	{say: []string{"I'm new to BI, so go slowly"}, expertise: cognition.Novice},
	{say: []string{"I'm an expert in SQL"}, expertise: cognition.Expert},
	{say: []string{"I'm a principal engineer"}, role: "principal engineer", expertise: cognition.Expert},
	{say: []string{"I have 2 years of experience with dashboards"}, expertise: cognition.Intermediate},
	// styles and formats
	{say: []string{"Please be concise."}, style: cognition.Concise},
	{say: []string{"keep it short"}, style: cognition.Concise},
	{say: []string{"I like long, detailed answers"}, style: cognition.Detailed},
	{say: []string{"Don't make the answers too short, I want the details"}, style: cognition.Detailed},
	{say: []string{"no need for details, just the answer please"}, style: cognition.Concise},
	{say: []string{"Please explain in depth."}, style: cognition.Detailed},
	{say: []string{"Answer with bullet points please"}, format: "bullet points"},
	{say: []string{"Use numbered lists in your replies"}, format: "numbered lists"},
	{say: []string{"Give me technical answers, I can take it"}, style: cognition.Technical},
	{say: []string{"Give me a brief overview of the Pipelines product"}, style: "-"},
	{say: []string{"What is the longest retention you offer?"}, style: "-"},
}

// TestLearnerByKind scores the tuning introductions: every field right.
func TestLearnerByKind(t *testing.T) {
	right, total := scoreIntroductions(t, tuningIntroductions)
	if right != total {
		t.Errorf("tuning introductions: %d/%d fields right", right, total)
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
		{"What do you know about me?", profile, []string{"your name is Ada", "you like concise answers"}},
		{"What's my job?", profile + "\n- Prefers role: data engineer\n- Prefers organization: Globex", []string{"You are a data engineer at Globex."}},
		{"Who am I?", "User profile:\n- Prefers name: Linus\n- Prefers role: SRE", []string{"your name is Linus", "you are an SRE"}},
		// As cognition renders it: learned text quoted.
		{"Who am I?", "User profile:\n- Interests: \"etl\", \"go\"\n- Prefers \"name\": \"Linus\"\n- Prefers \"role\": \"SRE\"", []string{"your name is Linus", "you are an SRE"}},
		{"Hello!", profile, []string{"Hello Ada!"}},
		// Said earlier in the conversation, without cognition.
		{"what's my name", "user: Hi, I'm Linus and I'm a data engineer.\nassistant: Nice to meet you, Linus!", []string{"Your name is Linus."}},
		{"Hi, I'm Linus. I'm a data engineer working on ETL pipelines; keep answers brief please", "",
			[]string{"Nice to meet you, Linus!", "you're a data engineer", "I'll keep my answers short."}},
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
