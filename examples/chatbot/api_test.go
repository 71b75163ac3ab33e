package chatbot_test

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestDisconnectCancelsTurn closes the client's connection while a tool
// runs: the tool's call is cancelled, the turn leaves no answer in the
// conversation, and the conversation goes on with the next message.
func TestDisconnectCancelsTurn(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan struct{})
	web := webServer(func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	})
	_, srv := newServer(t, chatbot.Config{NoBundledServers: true, MCPServers: []mcp.Server{web}})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := postChat(t, ctx, srv.URL, `{"conversation_id": "conv-gone", "message": "What's the latest news about Northwind Metrics?"}`)
	var seen []event.Type
	for ev, err := range chatevent.ReadEvents(resp.Body) {
		if err != nil {
			t.Fatalf("reading events: %v", err)
		}
		seen = append(seen, ev.Type)
		if ev.Type == chatevent.TypeToolStart {
			break
		}
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatalf("the tool never started; events %v", seen)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool's call was not cancelled after the client went away")
	}

	next := chat(t, srv, "conv-gone", "Hello!")
	if next.last() != chatevent.TypeResponseDone {
		t.Fatalf("next turn ended with %s; events %v", next.last(), next.types())
	}
	hist := history(t, srv, "conv-gone")
	if diff := cmp.Diff([]string{"user", "assistant"}, roles(hist)); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
}

func history(t *testing.T, srv *httptest.Server, conv string) []chatbot.HistoryMessage {
	t.Helper()
	resp, err := http.Get(srv.URL + "/api/v1/chat/" + conv + "/history")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Messages []chatbot.HistoryMessage `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Messages
}

func roles(msgs []chatbot.HistoryMessage) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role)
	}
	return out
}

// TestValidation sends bad requests: each gets 400 naming the field.
func TestValidation(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{MaxBodyBytes: 256, MaxMessageLen: 100})
	tests := []struct {
		name, path, body string
		field            string
	}{
		{"no message", "/api/v1/chat", `{"conversation_id": "c1"}`, "message"},
		{"blank message", "/api/v1/chat/sync", `{"message": "   "}`, "message"},
		{"message too long", "/api/v1/chat", `{"message": "` + strings.Repeat("a", 150) + `"}`, "message"},
		{"message not a string", "/api/v1/chat", `{"message": 42}`, "message"},
		{"bad conversation id", "/api/v1/chat", `{"message": "hi", "conversation_id": "a b/c"}`, "conversation_id"},
		{"unknown model", "/api/v1/chat", `{"message": "hi", "model": "gpt-9"}`, "model"},
		{"unknown field", "/api/v1/chat", `{"message": "hi", "mesage": "x"}`, "mesage"},
		{"body too large", "/api/v1/chat", `{"message": "` + strings.Repeat("a", 400) + `"}`, "body"},
		{"empty body", "/api/v1/chat", ``, "body"},
		{"not json", "/api/v1/chat", `hello`, "body"},
		{"resumable not a bool", "/api/v1/chat", `{"message": "hi", "resumable": "yes"}`, "resumable"},
		{"reserved request id", "/api/v1/chat", `{"message": "hi", "request_id": "history"}`, "request_id"},
		{"elicitation without id", "/api/v1/elicitation/respond", `{"action": "accept"}`, "elicitation_id"},
		{"elicitation bad action", "/api/v1/elicitation/respond", `{"elicitation_id": "e1", "action": "maybe"}`, "action"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+tt.path, "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got struct{ Error, Field string }
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusBadRequest || got.Field != tt.field {
				t.Errorf("got %d field %q (%s), want 400 field %q", resp.StatusCode, got.Field, got.Error, tt.field)
			}
		})
	}
	resp, err := http.Get(srv.URL + "/api/v1/chat/bad%20id/history")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("history of a bad id: %s, want 400", resp.Status)
	}
	resp, err = http.Post(srv.URL+"/api/v1/elicitation/respond", "application/json",
		strings.NewReader(`{"elicitation_id": "nope", "action": "accept"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("answer to an unknown elicitation: %s, want 404", resp.Status)
	}
}

// TestSync asks through the JSON endpoint.
func TestSync(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	resp := postJSON(t, srv.URL+"/api/v1/chat/sync", map[string]string{"message": "What is 15% of 240?", "request_id": "req-sync-1"})
	defer resp.Body.Close()
	var got chatbot.SyncResponse
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || got.RequestID != "req-sync-1" || got.ConversationID == "" ||
		!strings.Contains(got.Response, "36") || got.Action != "call_tool" || got.TotalTokens <= 0 || got.Usage.Total() != got.TotalTokens {
		t.Errorf("sync answer %d %+v", resp.StatusCode, got)
	}
}

// TestToolsAndHealth lists the catalogue and the health report.
func TestToolsAndHealth(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	var tools struct {
		Tools []struct{ Name, Source string }
	}
	getJSON(t, srv.URL+"/api/v1/tools", &tools)
	have := map[string]string{}
	for _, tl := range tools.Tools {
		have[tl.Name] = tl.Source
	}
	for name, source := range map[string]string{"search_knowledge": "mcp", "calculate": "mcp", "web_search": "mcp",
		"synthesizer": "operator", "query_rewriter": "operator", "self_info": "local"} {
		if have[name] != source {
			t.Errorf("tool %s: source %q, want %q (tools %v)", name, have[name], source, have)
		}
	}
	var health struct {
		Status, Version string
		Demo            bool
		MCP             []chatbot.ServerHealth
	}
	getJSON(t, srv.URL+"/health", &health)
	var servers []string
	for _, s := range health.MCP {
		servers = append(servers, s.Name+" "+s.Transport)
	}
	if health.Status != "ok" || health.Version != chatbot.Version || !health.Demo {
		t.Errorf("health %+v", health)
	}
	if diff := cmp.Diff([]string{"calculator inprocess", "knowledge inprocess", "websearch inprocess"}, servers); diff != "" {
		t.Errorf("health's MCP servers (-want +got):\n%s", diff)
	}
	// Each server's counts of what it sent that was dropped or refused.
	var counts struct{ MCP []map[string]any }
	getJSON(t, srv.URL+"/health", &counts)
	for _, s := range counts.MCP {
		for _, k := range []string{"dropped_progress", "rejected_requests"} {
			if v, ok := s[k].(float64); !ok || v != 0 {
				t.Errorf("health's MCP server %v: %s is %v, want 0", s["name"], k, s[k])
			}
		}
	}
	var pending struct{ Pending []string }
	getJSON(t, srv.URL+"/api/v1/elicitation/pending", &pending)
	if pending.Pending == nil || len(pending.Pending) != 0 {
		t.Errorf("pending %v, want an empty list", pending.Pending)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// TestMermaid keeps the READMEs' diagrams (this package's and the
// repository's) in step with the graph
// (go test -run TestMermaid -update rewrites it).
func TestMermaid(t *testing.T) {
	bot, err := chatbot.New(context.Background(), chatbot.Config{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close(context.Background())
	got := bot.Graph().Mermaid()
	golden := filepath.Join("testdata", "graph.mmd")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("Mermaid (-golden +got):\n%s", diff)
	}
	for _, name := range []string{"README.md", filepath.Join("..", "..", "README.md")} {
		readme, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), strings.TrimSpace(got)) {
			t.Errorf("%s does not show the graph's current Mermaid diagram (testdata/graph.mmd)", name)
		}
	}
}

// TestCloseLeavesNoGoroutine runs turns of every kind, closes the bot and
// checks that nothing it started is still running.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	bot, err := chatbot.New(context.Background(), chatbot.Config{Offline: true, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"Hello!", "What is 15% of 240?", "Compare our pricing to competitors"} {
		for _, err := range bot.Chat(context.Background(), chatbot.Request{ConversationID: "leak", Message: q}) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := bot.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, err := range bot.Chat(context.Background(), chatbot.Request{Message: "Hello!"}) {
		if err != chatbot.ErrClosed {
			t.Errorf("Chat after Close: %v, want ErrClosed", err)
		}
	}
	goleak.VerifyNone(t, ignore)
}
