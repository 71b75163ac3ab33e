package chatbot_test

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// TestPage serves the chat page at / (also when the handler is mounted
// under a prefix, since the page calls the API by relative paths) and
// checks that its script parses (with Node.js, when installed).
func TestPage(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	page := string(body)
	for _, want := range []string{`api("api/v1/chat"`, `api("api/v1/elicitation/respond"`, `fetch("health")`, "DEMO MODE",
		`api("api/v1/chat/stream/"`, `"Last-Event-ID"`, "resumable: true", "reconnecting…",
		`api("api/v1/documents"`, `sessionStorage.setItem("token"`, `"Bearer "`, `type="file"`, `"response.chunk"`, `"workflow.step.start"`, `"tool.progress"`, `"elicitation.request"`, `"token.usage"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	resp, err = http.Get(srv.URL + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /nope: %s, want 404", resp.Status)
	}

	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed: the page's script is not syntax-checked")
	}
	i, j := strings.Index(page, "<script>"), strings.Index(page, "</script>")
	script := filepath.Join(t.TempDir(), "page.js")
	if err := os.WriteFile(script, []byte(page[i+len("<script>"):j]), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--check", script).CombinedOutput(); err != nil {
		t.Errorf("the page's script does not parse: %v\n%s", err, out)
	}
}
