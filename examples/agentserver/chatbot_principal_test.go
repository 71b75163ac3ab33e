package agentserver_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/examples/agentserver"
	"github.com/agentgraph/agentgraph/examples/bosai"
	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// TestChatbotConversationsArePrincipalsAndGoWithThreads: with API keys,
// each principal's chatbot turns are its own conversations, counted
// against its own chatbot.Config.MaxConversations (here 1), so alice's
// conversation does not refuse bob's; deleting a thread deletes its
// conversation, so that the principal may start another, and a
// stateless run's conversation goes with its temporary thread.
func TestChatbotConversationsArePrincipalsAndGoWithThreads(t *testing.T) {
	keys := map[string]string{"alice-key-0123456789": "alice", "bob-key-0123456789ab": "bob"}
	auth, err := server.APIKeys(keys)
	if err != nil {
		t.Fatal(err)
	}
	app, err := agentserver.New(t.Context(), agentserver.Config{Dir: t.TempDir(), Server: server.Config{Authenticate: auth},
		Chatbot: chatbot.Config{Offline: true, MaxConversations: 1}, BosAI: bosai.Config{Offline: true}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(app)
	t.Cleanup(func() {
		hs.Close()
		if err := app.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	send := func(key, method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Api-Key", key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const alice, bob = "alice-key-0123456789", "bob-key-0123456789ab"
	newThread := func(key string) string {
		t.Helper()
		code, body := send(key, "POST", "/threads", `{}`)
		if code != 200 {
			t.Fatalf("POST /threads: %d %s", code, body)
		}
		_, rest, _ := strings.Cut(body, `"thread_id":"`)
		id, _, _ := strings.Cut(rest, `"`)
		return id
	}
	const turn = `{"assistant_id":"chatbot","input":{"messages":[{"role":"user","content":"Hello!"}]}}`
	chat := func(key, path, what string) {
		t.Helper()
		code, body := send(key, "POST", path, turn)
		if code != 200 || strings.Contains(body, "__error__") {
			t.Fatalf("%s: %d %s", what, code, body)
		}
	}

	ta := newThread(alice)
	chat(alice, "/threads/"+ta+"/runs/wait", "alice's first conversation")
	tb := newThread(bob)
	chat(bob, "/threads/"+tb+"/runs/wait", "bob's first conversation, while alice holds hers")

	if code, body := send(alice, "DELETE", "/threads/"+ta, ""); code != 204 {
		t.Fatalf("DELETE alice's thread: %d %s", code, body)
	}
	chat(alice, "/threads/"+newThread(alice)+"/runs/wait", "alice's conversation after she deleted her first thread")

	if code, body := send(bob, "DELETE", "/threads/"+tb, ""); code != 204 {
		t.Fatalf("DELETE bob's thread: %d %s", code, body)
	}
	chat(bob, "/runs/wait", "bob's first stateless run")
	chat(bob, "/runs/wait", "bob's second stateless run")
}

// TestChatbotRefusesPrincipalLocal: an API key whose principal is named
// as the bot's LocalPrincipal cannot run the chatbot graph, which would
// then read and write the conversations the bot keeps for requests
// without authentication.
func TestChatbotRefusesPrincipalLocal(t *testing.T) {
	auth, err := server.APIKeys(map[string]string{"local-key-0123456789": chatbot.LocalPrincipal})
	if err != nil {
		t.Fatal(err)
	}
	app, err := agentserver.New(t.Context(), agentserver.Config{Dir: t.TempDir(), Server: server.Config{Authenticate: auth},
		Chatbot: chatbot.Config{Offline: true}, BosAI: bosai.Config{Offline: true}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(app)
	t.Cleanup(func() {
		hs.Close()
		if err := app.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	req, err := http.NewRequest("POST", hs.URL+"/runs/wait", strings.NewReader(`{"assistant_id":"chatbot","input":{"messages":[{"role":"user","content":"Hello!"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", "local-key-0123456789")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "__error__") || !strings.Contains(string(b), "reserved for requests without authentication") {
		t.Errorf("a run of principal %q: %d %s, want the chatbot graph's refusal", chatbot.LocalPrincipal, resp.StatusCode, b)
	}
}
