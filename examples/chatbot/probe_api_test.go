package chatbot_test

import (
	"bytes"
	"io"
	"mime/multipart"
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

// TestUploadWithTwoFilesIsRefused: a multipart upload with two file parts
// (or a field sent twice) is refused naming the field, instead of storing
// the second file under the first file's name and losing the first; the
// conversation then holds no document.
func TestUploadWithTwoFilesIsRefused(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	for name, parts := range map[string][][2]string{
		"file":            {{"file", "first.txt"}, {"file", "second.txt"}},
		"content":         {{"file", "first.txt"}, {"content", "second.txt"}},
		"conversation_id": {{"conversation_id", "conv-2"}, {"file", "first.txt"}},
	} {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		_ = mw.WriteField("conversation_id", "conv-2")
		for _, p := range parts {
			if p[0] == "conversation_id" {
				_ = mw.WriteField(p[0], p[1])
				continue
			}
			fw, _ := mw.CreateFormFile(p[0], p[1])
			_, _ = io.WriteString(fw, "the text of "+p[1])
		}
		_ = mw.Close()
		resp, err := http.Post(srv.URL+"/api/v1/documents", mw.FormDataContentType(), &body)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"field":"`+name+`"`) || !strings.Contains(string(b), "is sent twice") {
			t.Errorf("%s twice: %s %s; want 400 naming %s", name, resp.Status, b, name)
		}
	}
	if code, body := status(t, srv, http.MethodGet, "/api/v1/documents/conv-2", "", ""); code != http.StatusOK || !strings.Contains(body, `"documents":[]`) {
		t.Errorf("documents after refused uploads: %d %s; want none", code, body)
	}
}

// TestWrongJSONTypesNameTheField: a body or field of the wrong JSON type
// is refused naming the field as the client spells it (body for the
// whole body, content for an elicitation answer's content, not Go's
// "Response.content") and the type in JSON's words.
func TestWrongJSONTypesNameTheField(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	for _, c := range []struct{ path, body, field, reason string }{
		{"/api/v1/chat/sync", `[]`, "body", "must be a JSON object, not array"},
		{"/api/v1/chat/sync", `{"message": 5}`, "message", "must be a JSON string, not number"},
		{"/api/v1/chat/sync", `{"message": "x", "resumable": "yes"}`, "resumable", "must be a JSON boolean, not string"},
		{"/api/v1/elicitation/respond", `{"elicitation_id": "e", "action": "accept", "content": [1]}`, "content", "must be a JSON object, not array"},
		{"/api/v1/documents", `{"conversation_id": 7}`, "conversation_id", "must be a JSON string, not number"},
	} {
		code, body := status(t, srv, http.MethodPost, c.path, "", c.body)
		if code != http.StatusBadRequest || !strings.Contains(body, `"field":"`+c.field+`"`) || !strings.Contains(body, c.field+": "+c.reason) {
			t.Errorf("POST %s %s: %d %s; want 400 naming %s: %s", c.path, c.body, code, body, c.field, c.reason)
		}
	}
}

// TestConversationWithControlCharactersIsListed: a first message holding
// a NUL (which no store keeps) or another control character still lists
// its conversation, titled without them.
func TestConversationWithControlCharactersIsListed(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	startTurn(t, srv, "", `{"conversation_id": "ctl", "message": "\u0000What is\u0007 2 + 2?\u001b"}`).rest(t)
	code, body := status(t, srv, http.MethodGet, "/api/v1/conversations", "", "")
	if code != http.StatusOK || !strings.Contains(body, `{"id":"ctl","title":"What is 2 + 2?"`) {
		t.Errorf("conversations: %d %s; want ctl titled \"What is 2 + 2?\"", code, body)
	}
}
