package agentserver_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/examples/agentserver"
	"github.com/agentgraph/agentgraph/examples/chatbot"
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

// TestTwoInstancesOnPostgres serves the graphs from two Apps on one
// PostgreSQL schema: a run created on the first is joined, streamed from
// its whole log, on the second. It skips when no PostgreSQL answers at
// AGENTGRAPH_TEST_POSTGRES (default postgres://postgres@127.0.0.1:5432/test).
func TestTwoInstancesOnPostgres(t *testing.T) {
	dsn := os.Getenv("AGENTGRAPH_TEST_POSTGRES")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	conn, err := pgx.Connect(ctx, dsn)
	cancel()
	if err != nil {
		t.Skipf("no PostgreSQL at %s (%v); start one or set AGENTGRAPH_TEST_POSTGRES", dsn, err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "agentserver_example_" + hex.EncodeToString(b)
	defer func() {
		for _, sc := range []string{schema, agentserver.ChatbotSchema(schema)} {
			if _, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{sc}.Sanitize()+" CASCADE"); err != nil {
				t.Error(err)
			}
		}
		conn.Close(context.Background())
	}()
	var urls []string
	for range 2 {
		app, err := agentserver.New(t.Context(), agentserver.Config{Postgres: dsn, Schema: schema, Chatbot: chatbot.Config{Offline: true}})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(app)
		defer func() {
			hs.Close()
			if err := app.Close(context.Background()); err != nil {
				t.Error(err)
			}
		}()
		urls = append(urls, hs.URL)
	}
	var th map[string]any
	post(t, urls[0]+"/threads", `{}`, &th)
	tid := th["thread_id"].(string)
	var run map[string]any
	post(t, urls[0]+"/threads/"+tid+"/runs", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"hello there"}]},"stream_mode":["values"]}`, &run)
	req, _ := http.NewRequest("GET", urls[1]+"/threads/"+tid+"/runs/"+run["run_id"].(string)+"/stream", nil)
	req.Header.Set("Last-Event-ID", "-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "event: metadata") || !strings.Contains(string(body), "You said: hello there") || !strings.HasSuffix(strings.TrimSpace(string(body)), "id: "+strconv.Itoa(strings.Count(string(body), "\nid: ")-1)) {
		t.Fatalf("stream joined on the second instance:\n%s", body)
	}
	if !strings.Contains(string(body), "event: end") {
		t.Fatalf("stream joined on the second instance has no end event:\n%s", body)
	}
	// The chatbot keeps its conversations in PostgreSQL too: a second turn
	// on the other instance sees the first.
	post(t, urls[0]+"/threads", `{}`, &th)
	tid = th["thread_id"].(string)
	post(t, urls[0]+"/threads/"+tid+"/runs/wait", `{"assistant_id":"chatbot","input":{"messages":[{"role":"user","content":"Hello!"}]}}`, &map[string]any{})
	var out struct {
		Messages []map[string]any `json:"messages"`
	}
	post(t, urls[1]+"/threads/"+tid+"/runs/wait", `{"assistant_id":"chatbot","input":{"messages":[{"role":"user","content":"What is 15% of 240?"}]}}`, &out)
	if len(out.Messages) != 4 || out.Messages[0]["content"] != "Hello!" {
		t.Fatalf("chatbot's second turn, on the other instance: %v", out.Messages)
	}
	var tables int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", agentserver.ChatbotSchema(schema)).Scan(&tables); err != nil || tables == 0 {
		t.Fatalf("the chatbot's schema holds %d tables (%v); want its conversations in PostgreSQL", tables, err)
	}
}

// TestAgentInputOnlyMessagesAndInstructions: a client writes only the
// agent's messages and instructions; its accounting (iterations, usage,
// outcome) is refused with 422 naming the keys, on runs and on state
// updates, so that a client cannot fake it (negative iterations let a run
// call the model past its limit).
func TestAgentInputOnlyMessagesAndInstructions(t *testing.T) {
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
	post(t, hs.URL+"/threads", `{"metadata":{"graph_id":"agent"}}`, &th)
	tid := th["thread_id"].(string)
	for _, c := range []struct{ path, body, want string }{
		{"/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"hi"}],"iterations":-5000,"usage":{"input_tokens":-9}}}`, "input.iterations, input.usage: not a field clients may write"},
		{"/runs/wait", `{"assistant_id":"agent","input":{"outcome":"answered"}}`, "input.outcome: not a field clients may write"},
		{"/state", `{"values":{"run_usage":{"input_tokens":-9}}}`, "values.run_usage: not a field clients may write"},
	} {
		resp, err := http.Post(hs.URL+"/threads/"+tid+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 422 || !strings.Contains(string(b), c.want) || !strings.Contains(string(b), "instructions, messages") {
			t.Errorf("POST %s %s: %d %s; want 422 naming %q and the writable fields", c.path, c.body, resp.StatusCode, b, c.want)
		}
	}
	var out struct {
		Messages []map[string]any `json:"messages"`
	}
	post(t, hs.URL+"/threads/"+tid+"/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"hello"}],"instructions":"be brief"}}`, &out)
	if len(out.Messages) != 2 {
		t.Fatalf("agent replied %v; want the question and a reply", out.Messages)
	}
}
