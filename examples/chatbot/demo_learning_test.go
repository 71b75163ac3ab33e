package chatbot_test

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// In demo mode the offline model learns who a user is and how they like
// their answers from an introduction, as a model would, and what it
// learned shapes later answers in other conversations: brief answers are
// shorter than a stranger's, detailed ones longer, a list format gives
// lists; the name and role answer questions about the user.
func TestDemoLearnedStyleShapesAnswers(t *testing.T) {
	// ContextTimeout -1: the answers must see what was learned; the default
	// 100 ms for loading it runs out on a loaded machine.
	bot, srv, _ := newRecordedServer(t, chatbot.Config{DataDir: t.TempDir(), Cognition: &chatbot.CognitionConfig{ContextTimeout: -1}})
	intro := map[string]string{
		"linus": "Hi, I'm Linus. I'm a data engineer… I mostly work on ETL pipelines; keep answers brief please",
		"dora":  "Hello, my name is Dora and I'm a procurement manager. I like detailed, thorough answers.",
		"bea":   "Please answer with bullet points from now on.",
	}
	for user, msg := range intro {
		if tr := chatAs(t, srv, "intro-"+user, user, msg); tr.answer() == "" {
			t.Fatalf("%s's introduction got no answer", user)
		}
	}
	waitLearned(t, bot.Cognition())

	var p chatbot.UserProfile
	getJSON(t, srv.URL+"/api/v1/users/linus/profile", &p)
	if p.Profile.Style != cognition.Concise || p.Profile.Preferences["name"].Value != "Linus" ||
		p.Profile.Preferences["role"].Value != "data engineer" || p.Profile.Expertise == "" {
		t.Errorf("linus's profile: %+v", p.Profile)
	}

	const lookup = "How much does the Team plan cost?"
	plain := chatAs(t, srv, "ask-stranger", "stranger", lookup).answer()
	brief := chatAs(t, srv, "ask-linus", "linus", lookup).answer()
	detailed := chatAs(t, srv, "ask-dora", "dora", lookup).answer()
	for who, ans := range map[string]string{"stranger": plain, "linus": brief, "dora": detailed} {
		if !strings.Contains(ans, "$49 ") {
			t.Errorf("%s's answer lacks the Team price $49: %q", who, ans)
		}
	}
	t.Logf("brief: %s\nplain: %s\ndetailed: %s", brief, plain, detailed)
	if !(len(brief) < len(plain) && len(plain) < len(detailed)) {
		t.Errorf("answer lengths brief %d, plain %d, detailed %d; want brief < plain < detailed\nbrief: %s\nplain: %s\ndetailed: %s",
			len(brief), len(plain), len(detailed), brief, plain, detailed)
	}

	const general = "What is Kubernetes?"
	if got := chatAs(t, srv, "general-stranger", "stranger", general).answer(); strings.HasPrefix(got, "- ") {
		t.Errorf("stranger's general answer is a list: %q", got)
	}
	if got := chatAs(t, srv, "general-bea", "bea", general).answer(); !strings.HasPrefix(got, "- ") {
		t.Errorf("bea asked for bullet points; general answer %q", got)
	}

	for _, c := range []struct{ say, want string }{
		{"what's my name?", "Linus"},
		{"What do I do for a living?", "data engineer"},
		{"hey", "Hello Linus!"},
	} {
		if got := chatAs(t, srv, "recall-linus", "linus", c.say).answer(); !strings.Contains(got, c.want) {
			t.Errorf("linus %q: answer %q lacks %q", c.say, got, c.want)
		}
	}
}
