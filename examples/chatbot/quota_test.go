package chatbot_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// TestDocumentQuotaPerPrincipal: a principal's documents, over all its
// conversations, are bounded in number and in bytes (409 naming the
// Config field beyond); another principal's quota is its own, and a
// deletion makes room.
func TestDocumentQuotaPerPrincipal(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals, Documents: chatbot.DocumentConfig{
		Limits: document.Limits{MaxPerConversation: 10}, MaxPerPrincipal: 3, MaxBytesPerPrincipal: 1000}})
	up := func(token, conv string, size int) (int, string) {
		body, _ := json.Marshal(map[string]string{"conversation_id": conv, "name": "notes.txt", "content_type": "text/plain",
			"content": strings.Repeat("a", size)})
		return status(t, srv, "POST", "/api/v1/documents", token, string(body))
	}
	var first string
	for i, conv := range []string{"c1", "c1", "c2"} {
		code, body := up(aliceToken, conv, 10)
		if code != http.StatusAccepted {
			t.Fatalf("alice's upload %d: %d %s", i, code, body)
		}
		if i == 0 {
			var info struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal([]byte(body), &info)
			first = info.ID
		}
	}
	if code, body := up(aliceToken, "c3", 10); code != http.StatusConflict || !strings.Contains(body, "Config.Documents.MaxPerPrincipal") {
		t.Errorf("alice's fourth document: %d %s, want 409 naming Config.Documents.MaxPerPrincipal", code, body)
	}
	if code, body := up(bobToken, "c1", 600); code != http.StatusAccepted {
		t.Errorf("bob's first document: %d %s, want 202", code, body)
	}
	if code, body := up(bobToken, "c9", 600); code != http.StatusConflict || !strings.Contains(body, "Config.Documents.MaxBytesPerPrincipal") {
		t.Errorf("bob's second 600 bytes: %d %s, want 409 naming Config.Documents.MaxBytesPerPrincipal", code, body)
	}
	if first == "" {
		t.Fatal("no document id in the first upload's answer")
	}
	if code, body := status(t, srv, "DELETE", "/api/v1/documents/c1/"+first, aliceToken, ""); code != http.StatusOK {
		t.Fatalf("deleting alice's document: %d %s", code, body)
	}
	if code, body := up(aliceToken, "c3", 10); code != http.StatusAccepted {
		t.Errorf("alice's upload after a deletion: %d %s, want 202", code, body)
	}
}
