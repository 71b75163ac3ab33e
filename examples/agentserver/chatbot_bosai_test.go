package agentserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/agentserver"
	"github.com/agentgraph/agentgraph/examples/bosai"
	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// stream posts a run to /runs/stream and returns its events (name, data).
func stream(t *testing.T, url, body string) (names []string, data []json.RawMessage) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d", url, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			names = append(names, strings.TrimPrefix(line, "event: "))
		case strings.HasPrefix(line, "data: "):
			data = append(data, json.RawMessage(strings.TrimPrefix(line, "data: ")))
		}
	}
	return names, data
}

// serveOffline serves the app with the chatbot and Bos-AI offline, closed
// at the end of the test.
func serveOffline(t *testing.T) *httptest.Server {
	t.Helper()
	app, err := agentserver.New(t.Context(), agentserver.Config{Dir: t.TempDir(), Chatbot: chatbot.Config{Offline: true}, BosAI: bosai.Config{Offline: true}})
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
	return hs
}

// TestServesTheChatbotAndBosAI runs the chatbot (a thread is its
// conversation, so a second turn sees the first) and Bos-AI (its trace
// streamed as custom events, its answer in the values) through the API,
// offline.
func TestServesTheChatbotAndBosAI(t *testing.T) {
	hs := serveOffline(t)
	var th map[string]any
	post(t, hs.URL+"/threads", `{}`, &th)
	tid := th["thread_id"].(string)
	names, data := stream(t, hs.URL+"/threads/"+tid+"/runs/stream", `{"assistant_id":"chatbot","input":{"messages":[{"role":"user","content":"Hello!"}]},"stream_mode":["values","messages-tuple","custom"]}`)
	var chunks strings.Builder
	custom := 0
	for i, n := range names {
		switch n {
		case "messages":
			var tuple []map[string]any
			if err := json.Unmarshal(data[i], &tuple); err != nil {
				t.Fatal(err)
			}
			chunks.WriteString(tuple[0]["content"].(string))
		case "custom":
			custom++
		case "error":
			t.Fatalf("chatbot run failed: %s", data[i])
		}
	}
	if !strings.HasPrefix(chunks.String(), "Hello! I'm the offline demo assistant") || custom == 0 || names[len(names)-1] != "end" {
		t.Fatalf("chatbot stream: answer %q, %d custom events, events %v", chunks.String(), custom, names)
	}
	var out struct {
		Messages []map[string]any `json:"messages"`
	}
	post(t, hs.URL+"/threads/"+tid+"/runs/wait", `{"assistant_id":"chatbot","input":{"messages":[{"role":"user","content":"What is 15% of 240?"}]}}`, &out)
	if len(out.Messages) != 4 || out.Messages[3]["type"] != "ai" || !strings.Contains(out.Messages[3]["content"].(string), "= 36") {
		t.Fatalf("chatbot's second turn: %v", out.Messages)
	}

	post(t, hs.URL+"/threads", `{}`, &th)
	tid = th["thread_id"].(string)
	names, data = stream(t, hs.URL+"/threads/"+tid+"/runs/stream", `{"assistant_id":"bosai","input":{"question":"How many customers are there per country, and what is 12 * 49?"},"stream_mode":["values","custom"]}`)
	var last struct {
		Messages []map[string]any `json:"messages"`
		Plan     bosai.Decision   `json:"plan"`
		Response bosai.Response   `json:"response"`
	}
	traces := 0
	for i, n := range names {
		switch n {
		case "values":
			if err := json.Unmarshal(data[i], &last); err != nil {
				t.Fatal(err)
			}
		case "custom":
			traces++
		case "error":
			t.Fatalf("bosai run failed: %s", data[i])
		}
	}
	if len(last.Response.Results) != 2 || last.Response.Data == nil || last.Response.Data.RowCount != 7 || traces < 5 {
		t.Fatalf("bosai: plan %v, response %+v, %d trace events", last.Plan.Agents, last.Response, traces)
	}
	if len(last.Messages) != 2 || last.Messages[1]["content"] != last.Response.Answer || last.Response.Answer == "" {
		t.Fatalf("bosai messages %v; want the question and the answer", last.Messages)
	}
}

// TestBosAIRefusesUntrustedHeadersAndHidesSecrets: the LangGraph front
// checks runs as Bos-AI's own HTTP API does (bosai.Bot.CheckUntrusted): a
// context api_headers is refused with 422, naming the key, and no run is
// made; a caller's bearer token reaches neither the run's values nor the
// thread's state.
func TestBosAIRefusesUntrustedHeadersAndHidesSecrets(t *testing.T) {
	hs := serveOffline(t)
	var th map[string]any
	post(t, hs.URL+"/threads", `{}`, &th)
	tid := th["thread_id"].(string)
	resp, err := http.Post(hs.URL+"/threads/"+tid+"/runs/wait", "application/json", strings.NewReader(
		`{"assistant_id":"bosai","input":{"question":"Is the service operational?","context":{"api_headers":"{\"X-Injected\":\"yes\"}"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 422 || !strings.Contains(string(body), "context api_headers is not accepted") {
		t.Fatalf("api_headers: %d %s", resp.StatusCode, body)
	}
	const token = "caller-token-0123456789"
	var out map[string]any
	post(t, hs.URL+"/threads/"+tid+"/runs/wait", `{"assistant_id":"bosai","input":{"question":"Is the service operational?","context":{"api_bearer_token":"`+token+`","tenant":"acme"}}}`, &out)
	state, err := http.Get(hs.URL + "/threads/" + tid + "/state")
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := io.ReadAll(state.Body)
	state.Body.Close()
	ob, _ := json.Marshal(out)
	for what, b := range map[string][]byte{"values": ob, "thread state": sb} {
		if !strings.Contains(string(b), `"tenant":"acme"`) {
			t.Errorf("%s lack the context: %s", what, b)
		}
		if strings.Contains(string(b), token) {
			t.Errorf("%s hold the token: %s", what, b)
		}
	}
}
