package chatbot_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/mcp"
)

// TestHealthShowsOwnScope: GET /health shows an authenticated principal
// the patterns of its own users only (by the ids it named), and the MCP
// servers without their last errors (which may quote any principal's
// tool arguments); Config.Admins see everything.
func TestHealthShowsOwnScope(t *testing.T) {
	const carolToken = "carol-token-0123456789abcdef"
	tokens := map[string]string{aliceToken: "alice", bobToken: "bob", carolToken: "carol"}
	failing := llmtest.New().Default(llmtest.Fail(errors.New("model down")))
	// A server that cannot start has a last error; it names the address.
	broken := mcp.Server{Name: "broken", URL: "http://127.0.0.1:1/mcp?secret=alice-argument"}
	_, srv := serve(t, chatbot.Config{Tokens: tokens, Admins: []string{"carol"}, Model: failing, DataDir: t.TempDir(),
		Cognition: &chatbot.CognitionConfig{Learner: cognition.LearnerFunc(func(context.Context, cognition.LearnInput) (cognition.Learning, error) {
			return cognition.Learning{}, nil
		})}, MCPServers: []mcp.Server{broken}}, 5*time.Second)
	// Three failed turns make alice's user "ada" struggle.
	for range 3 {
		status(t, srv, "POST", "/api/v1/chat/sync", aliceToken, `{"message": "Hello!", "user_id": "ada"}`)
	}
	type health struct {
		MCP []struct {
			Name      string `json:"name"`
			Failures  int    `json:"failures"`
			LastError string `json:"last_error"`
		} `json:"mcp"`
		Cognition struct {
			Patterns []string `json:"patterns"`
		} `json:"cognition"`
	}
	get := func(token string) (health, string) {
		_, body := status(t, srv, "GET", "/health", token, "")
		var h health
		if err := json.Unmarshal([]byte(body), &h); err != nil {
			t.Fatalf("/health: %v: %s", err, body)
		}
		return h, body
	}
	lastError := func(h health) string {
		for _, s := range h.MCP {
			if s.Name == "broken" {
				return s.LastError
			}
		}
		return ""
	}
	admin, body := get(carolToken)
	if !strings.Contains(strings.Join(admin.Cognition.Patterns, "\n"), "user_struggling(alice/ada)") || lastError(admin) == "" {
		t.Fatalf("/health for an admin: %s, want alice's struggling user and the broken server's last error", body)
	}
	if h, body := get(aliceToken); !strings.Contains(strings.Join(h.Cognition.Patterns, "\n"), "user_struggling(ada)") || lastError(h) != "" {
		t.Errorf("/health for alice: %s, want her user ada (as she named it) and no server error", body)
	}
	if h, body := get(bobToken); strings.Contains(body, "ada") || lastError(h) != "" {
		t.Errorf("/health for bob: %s, want neither alice's user nor the server's error", body)
	}
}
