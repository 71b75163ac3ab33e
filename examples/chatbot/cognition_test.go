package chatbot_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"

	"github.com/agentgraph/agentgraph/cognition"
	cogsqlite "github.com/agentgraph/agentgraph/cognition/sqlite"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/examples/supervisor/supervisortest"
)

// recorder is the offline model, recording the last human message of
// every call, so that a test sees the prompts the bot sends.
type recorder struct {
	*offline.Model
	mu      sync.Mutex
	prompts []string
}

func (r *recorder) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	r.record(req)
	return r.Model.Generate(ctx, req)
}

func (r *recorder) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	r.record(req)
	return r.Model.Stream(ctx, req)
}

// record keeps the last user message of req.
func (r *recorder) record(req *model.Request) {
	human := ""
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			human = m.Text()
		}
	}
	r.mu.Lock()
	r.prompts = append(r.prompts, human)
	r.mu.Unlock()
}

// take returns the prompts starting with marker recorded since the last
// take, and forgets every prompt recorded so far.
func (r *recorder) take(marker string) []string {
	return r.takeFunc(func(p string) bool { return strings.HasPrefix(p, marker) })
}

// takeStep takes the prompts of one step of package supervisor.
func (r *recorder) takeStep(step supervisortest.Step) []string {
	return r.takeFunc(func(p string) bool {
		req, ok := supervisortest.Parse(p)
		return ok && req.Step == step
	})
}

func (r *recorder) takeFunc(match func(string) bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.prompts {
		if match(p) {
			out = append(out, p)
		}
	}
	r.prompts = nil
	return out
}

// newRecordedServer starts a bot on the recorded offline model.
func newRecordedServer(t *testing.T, cfg chatbot.Config) (*chatbot.Bot, *httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{Model: offline.New(offline.Config{})}
	cfg.Model = rec
	bot, srv := serve(t, cfg, 10*time.Second)
	return bot, srv, rec
}

// chatAs runs a turn of user in conversation conv.
func chatAs(t *testing.T, srv *httptest.Server, conv, user, msg string) turn {
	t.Helper()
	tr, err := chatRequest(srv, map[string]string{"conversation_id": conv, "user_id": user, "message": msg})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// waitLearned waits until the service has learned from the turns
// observed so far, and fails the test if any learning failed. A turn's
// learning is queued before its last event is sent, so after chatAs it is
// waited for.
func waitLearned(t *testing.T, svc *cognition.Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := svc.Flush(ctx); err != nil {
		t.Fatalf("learning did not finish: %v (%+v)", err, svc.QueueStats())
	}
	if st := svc.QueueStats(); st.Failed > 0 {
		t.Fatalf("learning failed: %+v", st)
	}
}

// User A tells their name and preference in one conversation; once that
// turn is learned from, a new conversation of A shows the supervisor (and
// so the offline model's answer) A's profile, while user B's does not.
// Forgetting A removes the profile, from the API and from A's next turn.
func TestCognitionRemembersUserAcrossConversations(t *testing.T) {
	// ContextTimeout -1: the turns must see what was learned; the default
	// 100 ms for loading it runs out on a loaded machine.
	bot, srv, rec := newRecordedServer(t, chatbot.Config{DataDir: t.TempDir(), Cognition: &chatbot.CognitionConfig{ContextTimeout: -1}})
	first := chatAs(t, srv, "conv-1", "ada", "My name is Ada and I prefer short answers.")
	if got := first.answer(); !strings.Contains(got, "Nice to meet you, Ada!") {
		t.Errorf("first answer %q", got)
	}
	waitLearned(t, bot.Cognition())
	learns := rec.take(cognition.MarkerLearn)
	if len(learns) != 1 || !strings.Contains(learns[0], `"user": "My name is Ada and I prefer short answers."`) {
		t.Fatalf("learner prompts %q, want one about the first turn", learns)
	}

	var p chatbot.UserProfile
	getJSON(t, srv.URL+"/api/v1/users/ada/profile", &p)
	if p.UserID != "ada" || p.Profile.Style != cognition.Concise || p.Profile.Preferences["name"].Value != "Ada" || p.Memories != 1 ||
		len(p.Episodes) != 1 || p.Episodes[0].Summary != "The user's name is Ada." {
		t.Errorf("profile of ada: %+v", p)
	}

	second := chatAs(t, srv, "conv-2", "ada", "What is my name?")
	if got := second.answer(); got != "Your name is Ada." {
		t.Errorf("ada's answer in a new conversation: %q", got)
	}
	sup := rec.takeStep(supervisortest.Decide)
	if len(sup) == 0 {
		t.Fatal("no supervisor prompt recorded")
	}
	for _, want := range []string{"User profile:", "- Style preference: concise", `- Prefers "name": "Ada"`, `- Prefers "answers": "short answers"`} {
		if !strings.Contains(sup[0], want) {
			t.Errorf("ada's supervisor prompt lacks %q:\n%s", want, sup[0])
		}
	}

	third := chatAs(t, srv, "conv-3", "bob", "What is my name?")
	if got := third.answer(); strings.Contains(got, "Ada") || !strings.Contains(got, "don't know anything about you") {
		t.Errorf("bob's answer: %q", got)
	}
	for _, prompt := range rec.takeStep(supervisortest.Decide) {
		if strings.Contains(prompt, "Ada") || strings.Contains(prompt, "User profile:") {
			t.Errorf("bob's supervisor prompt holds ada's profile:\n%s", prompt)
		}
	}
	waitLearned(t, bot.Cognition())
	var health struct{ Cognition *chatbot.CognitionHealth }
	getJSON(t, srv.URL+"/health", &health)
	if h := health.Cognition; h == nil || h.Done < 3 || h.Failed != 0 || h.Queued != 0 || h.Dead != 0 || h.Confidence <= 0 || h.Confidence > 1 {
		t.Errorf("/health cognition: %+v, want 3 turns learned (and episode accesses recorded), none dead, a confidence in (0, 1]", h)
	}

	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/api/v1/users/ada", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE /api/v1/users/ada: %s", resp.Status)
	}
	if resp, err := http.Get(srv.URL + "/api/v1/users/ada/profile"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("profile of ada after DELETE: %s, want 404 (nothing known)", resp.Status)
		}
	}
	rec.take("")
	fourth := chatAs(t, srv, "conv-4", "ada", "What is my name?")
	if got := fourth.answer(); strings.Contains(got, "Ada") {
		t.Errorf("ada's answer after being forgotten: %q", got)
	}
	for _, prompt := range rec.takeStep(supervisortest.Decide) {
		if strings.Contains(prompt, "Ada") {
			t.Errorf("supervisor prompt after forgetting ada holds her profile:\n%s", prompt)
		}
	}
}

// Without Config.Cognition, a request with a user_id is answered as any
// other: no cognition store is created, no learning call is made and the
// user endpoints answer 404.
func TestCognitionOffByDefault(t *testing.T) {
	dir := t.TempDir()
	bot, srv, rec := newRecordedServer(t, chatbot.Config{DataDir: dir})
	if bot.Cognition() != nil {
		t.Fatal("Cognition() is not nil with Config.Cognition nil")
	}
	chatAs(t, srv, "conv-off", "ada", "My name is Ada and I prefer short answers.")
	second := chatAs(t, srv, "conv-off-2", "ada", "What is my name?")
	if got := second.answer(); strings.Contains(got, "Ada") {
		t.Errorf("answer %q knows the name without cognition", got)
	}
	if learns := rec.take(cognition.MarkerLearn); len(learns) != 0 {
		t.Errorf("%d learning calls with cognition off", len(learns))
	}
	var health map[string]any
	getJSON(t, srv.URL+"/health", &health)
	if _, ok := health["cognition"]; ok {
		t.Errorf("/health reports cognition while it is off: %v", health)
	}
	if _, err := os.Stat(filepath.Join(dir, "cognition.db")); !os.IsNotExist(err) {
		t.Errorf("cognition.db: %v, want it not to exist", err)
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		path := "/api/v1/users/ada"
		if method == http.MethodGet {
			path += "/profile"
		}
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s with cognition off: %s, want 404", method, path, resp.Status)
		}
	}
}

// A user_id that is not an id is refused with 400 naming the field, with
// cognition on or off, in chat requests and in the user endpoints.
func TestCognitionUserIDValidation(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg := chatbot.Config{DataDir: t.TempDir()}
		if on {
			cfg.Cognition = &chatbot.CognitionConfig{}
		}
		_, srv, _ := newRecordedServer(t, cfg)
		for _, id := range []string{"has space", "-dash-first", strings.Repeat("x", 129), "a/b"} {
			resp := postJSON(t, srv.URL+"/api/v1/chat", map[string]string{"message": "hi", "user_id": id})
			var e struct{ Error, Field string }
			decodeBody(t, resp, &e)
			if resp.StatusCode != http.StatusBadRequest || e.Field != "user_id" {
				t.Errorf("cognition %v, user_id %q: %d %+v, want 400 naming user_id", on, id, resp.StatusCode, e)
			}
		}
		if on {
			resp, err := http.Get(srv.URL + "/api/v1/users/has%20space/profile")
			if err != nil {
				t.Fatal(err)
			}
			var e struct{ Error, Field string }
			decodeBody(t, resp, &e)
			if resp.StatusCode != http.StatusBadRequest || e.Field != "user_id" {
				t.Errorf("GET profile of %q: %d %+v, want 400 naming user_id", "has space", resp.StatusCode, e)
			}
		}
	}
}

// Close waits for the learning still running: what a turn taught is in
// the SQLite store once Close returns, and no goroutine is left (goleak,
// in TestMain).
func TestCloseDrainsLearning(t *testing.T) {
	dir := t.TempDir()
	started, release := make(chan struct{}), make(chan struct{})
	learner := cognition.LearnerFunc(func(ctx context.Context, in cognition.LearnInput) (cognition.Learning, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			return cognition.Learning{}, ctx.Err()
		}
		return cognition.Learning{Profile: cognition.ProfileUpdate{Preferences: map[string]string{"name": "Ada"}}}, nil
	})
	bot, err := chatbot.New(context.Background(), chatbot.Config{Offline: true, DataDir: dir,
		Cognition: &chatbot.CognitionConfig{Learner: learner}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(bot.Handler())
	chatAs(t, srv, "conv-close", "ada", "My name is Ada.")
	srv.Close()
	<-started
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		closed <- bot.Close(ctx)
	}()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while learning was running", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if st := bot.Cognition().QueueStats(); st.Done != 1 || st.Failed != 0 || st.Canceled != 0 {
		t.Errorf("queue after Close: %+v, want one task done", st)
	}
	store, err := cogsqlite.New(context.Background(), cogsqlite.Config{Path: filepath.Join(dir, "cognition.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p, err := store.Profile(context.Background(), "ada")
	if err != nil {
		t.Fatal(err)
	}
	if p.Preferences["name"].Value != "Ada" || p.Interactions != 1 {
		t.Errorf("stored profile after Close: %+v", p)
	}
}

// decodeBody decodes a JSON response body into v and closes it.
func decodeBody(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("decoding the %s response: %v", resp.Status, err)
	}
}

// A turn whose learning finds the queue full is answered all the same;
// only its learning is dropped (and counted).
func TestCognitionQueueFullDoesNotFailTurn(t *testing.T) {
	started, release := make(chan struct{}, 3), make(chan struct{})
	learner := cognition.LearnerFunc(func(ctx context.Context, in cognition.LearnInput) (cognition.Learning, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return cognition.Learning{}, ctx.Err()
		}
		return cognition.Learning{}, nil
	})
	bot, srv, _ := newRecordedServer(t, chatbot.Config{DataDir: t.TempDir(),
		Cognition: &chatbot.CognitionConfig{Learner: learner, Workers: 1, QueueSize: 1}})
	defer close(release) // before Close, which waits for the learning
	chatAs(t, srv, "conv-q1", "ada", "Hello!")
	<-started // the worker holds the first turn's learning
	chatAs(t, srv, "conv-q2", "ada", "Hello!")
	third := chatAs(t, srv, "conv-q3", "ada", "Hello!")
	if third.last() != "response.done" {
		t.Errorf("third turn ended with %s, want response.done", third.last())
	}
	if st := bot.Cognition().QueueStats(); st.Rejected != 1 || st.Queued != 1 {
		t.Errorf("queue: %+v, want one queued and one refused", st)
	}
}
