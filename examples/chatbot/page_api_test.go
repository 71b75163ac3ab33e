package chatbot_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// TestConversationList checks GET /api/v1/conversations: a principal's
// conversations, most recently used first, titled by their first
// message; another principal sees none of them.
func TestConversationList(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals})
	for _, body := range []string{
		`{"conversation_id": "first", "message": "What is 15% of 240?"}`,
		`{"conversation_id": "second", "message": "What is 2 + 2?"}`,
		`{"conversation_id": "first", "message": "And 10% of 50?"}`,
	} {
		startTurn(t, srv, aliceToken, body).rest(t)
	}
	list := func(token string) []chatbot.ConversationSummary {
		code, body := status(t, srv, http.MethodGet, "/api/v1/conversations", token, "")
		if code != http.StatusOK {
			t.Fatalf("GET /api/v1/conversations: %d %s", code, body)
		}
		var out struct{ Conversations []chatbot.ConversationSummary }
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatal(err)
		}
		return out.Conversations
	}
	got := list(aliceToken)
	if len(got) != 2 || got[0].ID != "first" || got[1].ID != "second" {
		t.Fatalf("alice's conversations %+v, want first (most recent) then second", got)
	}
	if got[0].Title != "What is 15% of 240?" || got[1].Title != "What is 2 + 2?" {
		t.Errorf("titles %q, %q: want each conversation's first message", got[0].Title, got[1].Title)
	}
	if got := list(bobToken); len(got) != 0 {
		t.Errorf("bob sees alice's conversations: %+v", got)
	}
}

// TestStopTurn stops a resumable turn that waits for an answer: another
// principal cannot stop it (404); its owner can, and the turn ends with an
// error event of code "cancelled", its question withdrawn.
func TestStopTurn(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals})
	turn := startTurn(t, srv, aliceToken, `{"message": "I would like to book a demo", "request_id": "stop-me", "resumable": true}`)
	turn.until(t, chatevent.TypeElicitationRequest)
	if code, body := status(t, srv, http.MethodDelete, "/api/v1/chat/stream/stop-me", bobToken, ""); code != http.StatusNotFound {
		t.Errorf("bob stops alice's turn: %d %s, want 404", code, body)
	}
	if code, body := status(t, srv, http.MethodDelete, "/api/v1/chat/stream/stop-me", aliceToken, ""); code != http.StatusAccepted {
		t.Fatalf("alice stops her turn: %d %s, want 202", code, body)
	}
	evs := turn.rest(t)
	if len(evs) == 0 {
		t.Fatal("no event after the stop")
	}
	last := evs[len(evs)-1]
	if e, ok := last.Payload.(event.Error); !ok || e.Code != "cancelled" {
		t.Errorf("last event %s %+v, want an error with code cancelled", last.Type, last.Payload)
	}
	if _, body := status(t, srv, http.MethodGet, "/api/v1/elicitation/pending", aliceToken, ""); !strings.Contains(body, `"pending":[]`) {
		t.Errorf("the stopped turn's question is still pending: %s", body)
	}
	if code, _ := status(t, srv, http.MethodDelete, "/api/v1/chat/stream/no-such-turn", aliceToken, ""); code != http.StatusNotFound {
		t.Errorf("stopping an unknown turn: %d, want 404", code)
	}
}

// TestAnswerCheckedAgainstSchema answers the demo booking's form: an
// answer without the required fields, or with a malformed email, is
// refused with 400 in words about the fields (no schema location, no
// file path), and the question stays open; a valid answer books the demo,
// and the stream shows it as an elicitation.response event.
func TestAnswerCheckedAgainstSchema(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals})
	turn := startTurn(t, srv, aliceToken, `{"message": "I would like to book a demo"}`)
	req := turn.until(t, chatevent.TypeElicitationRequest).Payload.(chatevent.ElicitationRequest)
	respond := func(content string) (int, string) {
		return status(t, srv, http.MethodPost, "/api/v1/elicitation/respond", aliceToken,
			`{"elicitation_id": "`+req.ElicitationID+`", "action": "accept", "content": `+content+`}`)
	}
	for _, c := range []struct{ content, want string }{
		{`{}`, "email, date are required"},
		{`{"email": "not-an-address", "date": "` + nextWeekday() + `"}`, "email must be a valid email"},
	} {
		code, body := respond(c.content)
		if code != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("answer %s: %d %s, want 400 saying %q", c.content, code, body, c.want)
		}
		for _, leak := range []string{"file://", "jsonschema", "urn:"} {
			if strings.Contains(body, leak) {
				t.Errorf("answer %s: the error shows %q: %s", c.content, leak, body)
			}
		}
	}
	date := nextWeekday()
	if code, body := respond(`{"email": "ada@example.com", "date": "` + date + `"}`); code != http.StatusOK {
		t.Fatalf("valid answer: %d %s", code, body)
	}
	evs := turn.rest(t)
	var answered bool
	for _, ev := range evs {
		if r, ok := ev.Payload.(chatevent.ElicitationResponse); ok && r.ElicitationID == req.ElicitationID && r.Action == elicit.Accept {
			answered = true
		}
	}
	if !answered {
		t.Error("no elicitation.response event for the answer")
	}
	if a := answerOf(evs); !strings.Contains(a, "DEMO-") || !strings.Contains(a, date) {
		t.Errorf("answer %q, want a booking on %s", a, date)
	}
}

// TestRequestContextField sends the seed's "context" request field: an
// object is accepted (it used to be refused as an unknown field), and one
// over the limits is refused naming the field.
func TestRequestContextField(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	code, body := status(t, srv, http.MethodPost, "/api/v1/chat/sync", "",
		`{"message": "What is 15% of 240?", "context": {"page": "pricing", "locale": "en-GB"}}`)
	if code != http.StatusOK || !strings.Contains(body, "36") {
		t.Errorf("a turn with a context: %d %s", code, body)
	}
	var many strings.Builder
	many.WriteString(`{"message": "hi", "context": {`)
	for i := range 40 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`"k` + strings.Repeat("x", i) + `": 1`)
	}
	many.WriteString(`}}`)
	if code, body := status(t, srv, http.MethodPost, "/api/v1/chat/sync", "", many.String()); code != http.StatusBadRequest || !strings.Contains(body, `"field":"context"`) {
		t.Errorf("a context of 40 keys: %d %s, want 400 naming context", code, body)
	}
}
