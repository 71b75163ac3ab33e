package chatbot_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// TestConversationBounds: a principal keeps at most MaxConversations
// conversations of at most MaxConversationTurns turns; a turn beyond
// either gets 429 naming the setting, and nothing stored is dropped. The
// owner deletes a conversation (DELETE /api/v1/chat/{id}, guarded against
// other origins like every state-changing route), which makes room;
// another principal gets 404. Over the HTTP API, with SQLite (DataDir) and
// PostgreSQL.
func TestConversationBounds(t *testing.T) {
	stores := map[string]func(t *testing.T) chatbot.Config{
		"sqlite": func(t *testing.T) chatbot.Config { return chatbot.Config{DataDir: t.TempDir()} },
		"postgres": func(t *testing.T) chatbot.Config {
			dsn, schema := testPostgres(t)
			return chatbot.Config{Postgres: dsn, PostgresSchema: schema}
		},
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			cfg := store(t)
			cfg.Tokens, cfg.MaxConversations, cfg.MaxConversationTurns = twoPrincipals, 3, 2
			_, srv := newServer(t, cfg)
			turn := func(token, conv string) (int, string) {
				t.Helper()
				return status(t, srv, "POST", "/api/v1/chat/sync", token, fmt.Sprintf(`{"conversation_id": %q, "message": "Hello!"}`, conv))
			}
			for _, conv := range []string{"c1", "c2", "c3"} {
				if code, body := turn(aliceToken, conv); code != http.StatusOK {
					t.Fatalf("alice's %s: %d %s", conv, code, body)
				}
			}
			if code, body := turn(aliceToken, "c4"); code != http.StatusTooManyRequests || !strings.Contains(body, "Config.MaxConversations") {
				t.Errorf("alice's fourth conversation: %d %s, want 429 naming Config.MaxConversations", code, body)
			}
			if code, body := turn(bobToken, "c4"); code != http.StatusOK {
				t.Errorf("bob's first conversation: %d %s, want 200 (the bound is alice's)", code, body)
			}
			if code, body := turn(aliceToken, "c1"); code != http.StatusOK {
				t.Errorf("alice's second turn of c1: %d %s", code, body)
			}
			if code, body := turn(aliceToken, "c1"); code != http.StatusTooManyRequests || !strings.Contains(body, "Config.MaxConversationTurns") {
				t.Errorf("alice's third turn of c1: %d %s, want 429 naming Config.MaxConversationTurns", code, body)
			}
			if n := len(historyOf(t, srv, aliceToken, "c1")); n != 4 {
				t.Errorf("c1 keeps %d messages, want 4 (two turns, the refused one not stored)", n)
			}

			if code, body := status(t, srv, "DELETE", "/api/v1/chat/c2", bobToken, ""); code != http.StatusNotFound {
				t.Errorf("bob deleting alice's c2: %d %s, want 404", code, body)
			}
			if code, body := status(t, srv, "DELETE", "/api/v1/chat/c2", aliceToken, "", "Origin", "http://evil.example"); code != http.StatusForbidden {
				t.Errorf("a cross-origin delete: %d %s, want 403", code, body)
			}
			if code, body := status(t, srv, "DELETE", "/api/v1/chat/c2", aliceToken, ""); code != http.StatusNoContent {
				t.Fatalf("alice deleting c2: %d %s, want 204", code, body)
			}
			if code, body := status(t, srv, "GET", "/api/v1/chat/c2/history", aliceToken, ""); code != http.StatusNotFound {
				t.Errorf("c2's history after the delete: %d %s, want 404", code, body)
			}
			if code, body := status(t, srv, "DELETE", "/api/v1/chat/c2", aliceToken, ""); code != http.StatusNotFound {
				t.Errorf("deleting c2 again: %d %s, want 404", code, body)
			}
			if got, want := listed(t, srv, aliceToken), []string{"c1", "c3"}; !slices.Equal(got, want) {
				t.Errorf("alice's list after the delete: %v, want %v", got, want)
			}
			if code, body := turn(aliceToken, "c4"); code != http.StatusOK {
				t.Errorf("alice's new conversation after a delete: %d %s, want 200", code, body)
			}
			if code, body := status(t, srv, "DELETE", "/api/v1/chat/c4", bobToken, ""); code != http.StatusNoContent {
				t.Errorf("bob deleting his own c4: %d %s, want 204", code, body)
			}
			if n := len(historyOf(t, srv, aliceToken, "c4")); n != 2 {
				t.Errorf("alice's c4 keeps %d messages after bob deleted his c4, want 2", n)
			}
		})
	}
}

// TestConversationBoundsConfig: bounds that cannot hold stop New.
func TestConversationBoundsConfig(t *testing.T) {
	for _, cfg := range []chatbot.Config{{MaxConversations: 201}, {MaxConversations: -1}, {MaxConversationTurns: -1}} {
		cfg.Offline = true
		bot, err := chatbot.New(t.Context(), cfg)
		if err == nil {
			_ = bot.Close(t.Context())
			t.Errorf("New(%+v) = nil error", cfg)
			continue
		}
		if !strings.Contains(err.Error(), "Config.MaxConversation") {
			t.Errorf("New: %v, want an error naming the setting", err)
		}
	}
}

// historyOf returns the messages of token's principal's conversation.
func historyOf(t *testing.T, srv *httptest.Server, token, conv string) []chatbot.HistoryMessage {
	t.Helper()
	code, body := status(t, srv, "GET", "/api/v1/chat/"+conv+"/history", token, "")
	var h struct{ Messages []chatbot.HistoryMessage }
	if err := json.Unmarshal([]byte(body), &h); code != http.StatusOK || err != nil {
		t.Fatalf("history of %s: %d %s", conv, code, body)
	}
	return h.Messages
}

// listed returns the ids of token's principal's conversation list.
func listed(t *testing.T, srv *httptest.Server, token string) []string {
	t.Helper()
	code, body := status(t, srv, "GET", "/api/v1/conversations", token, "")
	var l struct{ Conversations []chatbot.ConversationSummary }
	if err := json.Unmarshal([]byte(body), &l); code != http.StatusOK || err != nil {
		t.Fatalf("conversations: %d %s", code, body)
	}
	var ids []string
	for _, c := range l.Conversations {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	return ids
}
