package chatbot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
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

// TestConversationTurnsBoundQueued: turns of a conversation one turn
// below Config.MaxConversationTurns that were admitted while another turn
// of it ran are checked again when their turn comes: one more runs, the
// others fail with conversation_limit, and the conversation keeps
// MaxConversationTurns turns.
func TestConversationTurnsBoundQueued(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals, MaxConversationTurns: 3})
	if code, body := status(t, srv, "POST", "/api/v1/chat/sync", aliceToken, `{"conversation_id": "x", "message": "Hello!"}`); code != http.StatusOK {
		t.Fatalf("first turn: %d %s", code, body)
	}
	// The second turn asks a question and holds the conversation while
	// it waits for the answer.
	asking := startTurn(t, srv, aliceToken, `{"conversation_id": "x", "message": "I would like to book a demo"}`)
	q := asking.until(t, chatevent.TypeElicitationRequest).Payload.(chatevent.ElicitationRequest)
	// Two more, admitted (their first event is out) while it runs.
	queued := []*liveTurn{
		startTurn(t, srv, aliceToken, `{"conversation_id": "x", "message": "Hello!"}`),
		startTurn(t, srv, aliceToken, `{"conversation_id": "x", "message": "Hello!"}`),
	}
	for _, lt := range queued {
		lt.until(t, chatevent.TypeSupervisorThinking)
	}
	code, body := status(t, srv, "POST", "/api/v1/elicitation/respond", aliceToken, fmt.Sprintf(
		`{"elicitation_id": %q, "action": "accept", "content": {"email": "ada@example.com", "date": %q}}`, q.ElicitationID, nextWeekday()))
	if code != http.StatusOK {
		t.Fatalf("respond: %d %s", code, body)
	}
	asking.rest(t)
	limited := 0
	for _, lt := range queued {
		evs := lt.rest(t)
		if len(evs) == 0 {
			t.Fatal("a queued turn's stream ended without events")
		}
		if e, ok := evs[len(evs)-1].Payload.(event.Error); ok {
			if e.Code != "conversation_limit" || !strings.Contains(e.Message, "Config.MaxConversationTurns") {
				t.Errorf("a queued turn's error: %+v, want conversation_limit naming Config.MaxConversationTurns", e)
			}
			limited++
		}
	}
	if limited != 1 {
		t.Errorf("%d of the two queued turns refused, want 1", limited)
	}
	if n := len(historyOf(t, srv, aliceToken, "x")); n != 6 {
		t.Errorf("x keeps %d messages, want 6 (Config.MaxConversationTurns turns)", n)
	}
}

// TestDeleteCancelsTurns: DELETE of a conversation does not wait for its
// running turn (here waiting for an answer to its question) nor runs the
// turns queued behind it on the emptied conversation: it cancels them
// (their streams end with conversation_deleted), deletes the
// conversation, and nothing brings it back.
func TestDeleteCancelsTurns(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals, MaxConversations: 1})
	if code, body := status(t, srv, "POST", "/api/v1/chat/sync", aliceToken, `{"conversation_id": "x", "message": "Hello!"}`); code != http.StatusOK {
		t.Fatalf("first turn: %d %s", code, body)
	}
	asking := startTurn(t, srv, aliceToken, `{"conversation_id": "x", "message": "I would like to book a demo"}`)
	asking.until(t, chatevent.TypeElicitationRequest)
	queued := startTurn(t, srv, aliceToken, `{"conversation_id": "x", "message": "Hello!"}`)
	queued.until(t, chatevent.TypeSupervisorThinking)

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, srv.URL+"/api/v1/chat/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("DELETE while a turn waits for an answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %s, want 204", resp.Status)
	}
	for name, lt := range map[string]*liveTurn{"running": asking, "queued": queued} {
		evs := lt.rest(t)
		if len(evs) == 0 {
			t.Fatalf("the %s turn's stream ended without events", name)
		}
		if e, ok := evs[len(evs)-1].Payload.(event.Error); !ok || e.Code != "conversation_deleted" {
			t.Errorf("the %s turn's last event: %+v, want an error conversation_deleted; its events after the delete: %+v", name, evs[len(evs)-1], evs)
		}
	}
	if code, body := status(t, srv, "GET", "/api/v1/chat/x/history", aliceToken, ""); code != http.StatusNotFound {
		t.Errorf("x's history after the delete: %d %s, want 404", code, body)
	}
	if got := listed(t, srv, aliceToken); len(got) != 0 {
		t.Errorf("alice's list after the delete: %v, want none", got)
	}
	// A conversation whose first turn still runs (nothing stored yet) is
	// there to delete too.
	first := startTurn(t, srv, aliceToken, `{"conversation_id": "z", "message": "I would like to book a demo"}`)
	first.until(t, chatevent.TypeElicitationRequest)
	if code, body := status(t, srv, "DELETE", "/api/v1/chat/z", aliceToken, ""); code != http.StatusNoContent {
		t.Errorf("DELETE of a conversation during its first turn: %d %s, want 204", code, body)
	}
	if evs := first.rest(t); len(evs) == 0 || evs[len(evs)-1].Type != event.TypeError {
		t.Errorf("the first turn's stream after the delete: %v, want it to end with an error", evs)
	}
	// The room the delete made is there: a new conversation starts.
	if code, body := status(t, srv, "POST", "/api/v1/chat/sync", aliceToken, `{"conversation_id": "y", "message": "Hello!"}`); code != http.StatusOK {
		t.Errorf("a new conversation after the delete: %d %s, want 200", code, body)
	}
}

// TestDeleteMessagesFirst: when deleting a conversation's messages fails,
// the conversation stays listed (and stored), so that the owner sees it
// and deletes it again. PostgreSQL, whose messages table refuses the
// delete for the test.
func TestDeleteMessagesFirst(t *testing.T) {
	dsn, schema := testPostgres(t)
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals, Postgres: dsn, PostgresSchema: schema})
	if code, body := status(t, srv, "POST", "/api/v1/chat/sync", aliceToken, `{"conversation_id": "x", "message": "Hello!"}`); code != http.StatusOK {
		t.Fatalf("turn: %d %s", code, body)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	refuse := fmt.Sprintf(`CREATE FUNCTION %[1]s.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
		CREATE TRIGGER refuse BEFORE DELETE ON %[1]s.memory_conversations FOR EACH ROW EXECUTE FUNCTION %[1]s.refuse()`, pgx.Identifier{schema}.Sanitize())
	if _, err := conn.Exec(t.Context(), refuse); err != nil {
		t.Fatal(err)
	}
	if code, body := status(t, srv, "DELETE", "/api/v1/chat/x", aliceToken, ""); code != http.StatusInternalServerError {
		t.Errorf("DELETE with the messages refusing: %d %s, want 500", code, body)
	}
	if got := listed(t, srv, aliceToken); !slices.Equal(got, []string{"x"}) {
		t.Errorf("alice's list after the failed delete: %v, want x still there", got)
	}
	if _, err := conn.Exec(t.Context(), fmt.Sprintf(`DROP TRIGGER refuse ON %s.memory_conversations`, pgx.Identifier{schema}.Sanitize())); err != nil {
		t.Fatal(err)
	}
	if code, body := status(t, srv, "DELETE", "/api/v1/chat/x", aliceToken, ""); code != http.StatusNoContent {
		t.Errorf("DELETE again: %d %s, want 204", code, body)
	}
	if got := listed(t, srv, aliceToken); len(got) != 0 {
		t.Errorf("alice's list after the delete: %v, want none", got)
	}
}
