package chatbot_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// TestReusedRequestIDNamedAsSent: a resumable turn whose request id names
// a running turn of the principal is refused with the id as the client
// sent it and a resume path that works, not the id as stored (with the
// principal in front, a path GET /api/v1/chat/stream/... does not match).
func TestReusedRequestIDNamedAsSent(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals})
	turn := startTurn(t, srv, aliceToken, `{"message": "I would like to book a demo", "request_id": "reused", "resumable": true}`)
	turn.until(t, chatevent.TypeElicitationRequest)
	code, body := status(t, srv, http.MethodPost, "/api/v1/chat", aliceToken, `{"message": "I would like to book a demo", "request_id": "reused", "resumable": true}`)
	if code != http.StatusBadRequest || !strings.Contains(body, `\"reused\" already names a resumable turn`) ||
		!strings.Contains(body, "GET /api/v1/chat/stream/reused\"") || strings.Contains(body, "alice") {
		t.Errorf("reused request id: %d %s; want 400 naming \"reused\" and GET /api/v1/chat/stream/reused", code, body)
	}
	if code, body := status(t, srv, http.MethodDelete, "/api/v1/chat/stream/reused", aliceToken, ""); code != http.StatusAccepted {
		t.Fatalf("stop: %d %s", code, body)
	}
	turn.rest(t)
}
