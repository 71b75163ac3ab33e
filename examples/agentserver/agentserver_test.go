package agentserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/examples/agentserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func post(t *testing.T, url, body string, out any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// TestServesTheAgentAndTheApprovalGraph runs both graphs through the API,
// on the SQLite files the command uses.
func TestServesTheAgentAndTheApprovalGraph(t *testing.T) {
	app, err := agentserver.New(t.Context(), agentserver.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(app)
	defer func() {
		hs.Close()
		if err := app.Close(t.Context()); err != nil {
			t.Error(err)
		}
	}()
	var th map[string]any
	post(t, hs.URL+"/threads", `{}`, &th)
	tid := th["thread_id"].(string)
	var out struct {
		Messages []map[string]any `json:"messages"`
	}
	post(t, hs.URL+"/threads/"+tid+"/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"hello there"}]}}`, &out)
	if len(out.Messages) != 2 || out.Messages[0]["type"] != "human" || out.Messages[1]["type"] != "ai" || !strings.Contains(out.Messages[1]["content"].(string), "You said: hello there") {
		t.Fatalf("agent replied %v", out.Messages)
	}
	post(t, hs.URL+"/threads", `{}`, &th)
	tid = th["thread_id"].(string)
	var paused map[string]any
	post(t, hs.URL+"/threads/"+tid+"/runs/wait", `{"assistant_id":"approval","input":{"topic":"rain"}}`, &paused)
	if ins, _ := paused["__interrupt__"].([]any); len(ins) != 1 {
		t.Fatalf("approval run: %v; want it paused on review", paused)
	}
	var done map[string]any
	post(t, hs.URL+"/threads/"+tid+"/runs/wait", `{"assistant_id":"approval","command":{"resume":"yes"}}`, &done)
	if done["approved"] != "yes" || len(done["log"].([]any)) != 3 {
		t.Fatalf("resumed approval run: %v", done)
	}
}
