package chatbot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers"
	"github.com/agentgraph/agentgraph/mcp"
)

// newServer starts a bot on the offline model with SQLite storage in a
// temporary directory, behind an HTTP test server.
func newServer(t *testing.T, cfg chatbot.Config) (*chatbot.Bot, *httptest.Server) {
	t.Helper()
	cfg.Offline = true
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.AnswerTimeout == 0 {
		// A question a test leaves unanswered on purpose must not be
		// given up by the clock on a loaded machine (the default is two
		// minutes): the turn would go on and end unlike the test expects.
		cfg.AnswerTimeout = time.Hour
	}
	return serve(t, cfg, 5*time.Second)
}

// serve starts a bot configured by cfg behind an HTTP test server; when
// the test ends, both close, the bot within closeWithin and without an
// error.
func serve(t *testing.T, cfg chatbot.Config, closeWithin time.Duration) (*chatbot.Bot, *httptest.Server) {
	t.Helper()
	bot, err := chatbot.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(bot.Handler())
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), closeWithin)
		defer cancel()
		if err := bot.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return bot, srv
}

// scriptedServer starts a bot, with SQLite storage in a temporary
// directory, on model served over OpenAI's wire protocol (the path a real
// provider takes): the aliases haiku and sonnet name its models
// scripted-small and scripted.
func scriptedServer(t *testing.T, model *llmtest.Model) (*chatbot.Bot, *httptest.Server) {
	t.Helper()
	upstream := llmtest.NewOpenAIServer(model)
	t.Cleanup(upstream.Close)
	reg := agent.DefaultRegistry()
	if err := agent.RegisterAliases(reg, "haiku=openai:scripted-small,sonnet=openai:scripted"); err != nil {
		t.Fatal(err)
	}
	return serve(t, chatbot.Config{DataDir: t.TempDir(), Agent: &agent.Config{
		Registry: reg, OpenAI: &provider.OpenAIConfig{BaseURL: upstream.URL + "/v1", APIKey: "test"},
	}}, 5*time.Second)
}

// webServer returns an in-process MCP server named "web" whose one tool,
// web_search, is handled by h.
func webServer(h server.ToolHandlerFunc) mcp.Server {
	web := server.NewMCPServer("slow-web", "1.0.0", server.WithToolCapabilities(false))
	web.AddTool(mcpgo.NewTool("web_search", mcpgo.WithDescription("Searches the web"), mcpgo.WithString("query", mcpgo.Required())), h)
	return mcp.Server{Name: "web", InProcess: web}
}

// heldWebSearch returns a webServer whose web_search call closes started,
// then waits for release (or its cancellation) before it answers.
func heldWebSearch() (web mcp.Server, started <-chan struct{}, release func()) {
	start, done := make(chan struct{}), make(chan struct{})
	web = webServer(func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		close(start)
		select {
		case <-done:
			return mcpgo.NewToolResultText("Northwind Metrics shipped a release."), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	return web, start, func() { close(done) }
}

// postChat posts body, a chat request's JSON, to url's /api/v1/chat with
// ctx and returns the response.
func postChat(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/v1/chat", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// turn is the events of one chat turn, read over HTTP.
type turn struct {
	events []event.Event
}

func (tr turn) types() []event.Type {
	var out []event.Type
	for _, ev := range tr.events {
		out = append(out, ev.Type)
	}
	return out
}

func (tr turn) answer() string {
	var sb strings.Builder
	for _, ev := range tr.events {
		if p, ok := ev.Payload.(chatevent.ResponseChunk); ok {
			sb.WriteString(p.Content)
		}
	}
	return sb.String()
}

func (tr turn) decisions() []string {
	var out []string
	for _, ev := range tr.events {
		if p, ok := ev.Payload.(chatevent.SupervisorDecided); ok {
			out = append(out, p.Action)
		}
	}
	return out
}

func (tr turn) tools() []string {
	var out []string
	for _, ev := range tr.events {
		if p, ok := ev.Payload.(chatevent.ToolStart); ok {
			out = append(out, p.Tool)
		}
	}
	return out
}

func (tr turn) last() event.Type {
	if len(tr.events) == 0 {
		return ""
	}
	return tr.events[len(tr.events)-1].Type
}

func postJSON(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// chat posts one message to /api/v1/chat and reads the whole SSE stream.
func chat(t *testing.T, srv *httptest.Server, conv, msg string) turn {
	t.Helper()
	tr, err := chatErr(srv, conv, msg)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range tr.events {
		if ev.Type == event.TypeError {
			t.Errorf("event %d is an error: %+v", i, ev.Payload)
		}
	}
	return tr
}

// chatErr is chat for any goroutine: it returns what went wrong.
func chatErr(srv *httptest.Server, conv, msg string) (turn, error) {
	return chatRequest(srv, map[string]string{"conversation_id": conv, "message": msg})
}

// chatRequest posts a chat request body and reads the turn's events.
func chatRequest(srv *httptest.Server, body any) (turn, error) {
	var tr turn
	b, err := json.Marshal(body)
	if err != nil {
		return tr, err
	}
	resp, err := http.Post(srv.URL+"/api/v1/chat", "application/json", bytes.NewReader(b))
	if err != nil {
		return tr, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return tr, fmt.Errorf("POST /api/v1/chat: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return tr, fmt.Errorf("Content-Type %q, want text/event-stream", ct)
	}
	for ev, err := range chatevent.ReadEvents(resp.Body) {
		if err != nil {
			return tr, fmt.Errorf("reading events: %w", err)
		}
		tr.events = append(tr.events, ev)
	}
	for i, ev := range tr.events {
		if ev.Seq != uint64(i+1) {
			return tr, fmt.Errorf("event %d (%s) has seq %d", i, ev.Type, ev.Seq)
		}
	}
	return tr, nil
}

// TestSupervisorActions runs each of the four supervisor actions end to
// end over HTTP on the offline model.
func TestSupervisorActions(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	tests := []struct {
		name, message string
		decisions     []string
		tools         []string
		last          event.Type
		want          []string // in the answer
	}{
		{"answer a greeting", "Hello!", []string{"answer"}, nil, chatevent.TypeResponseDone, []string{"Hello"}},
		{"calculate", "What is 15% of 240?", []string{"call_tool"}, []string{"calculate"}, chatevent.TypeResponseDone, []string{"36"}},
		{"search the knowledge base", "How much does the Team plan cost?", []string{"call_tool"}, []string{"search_knowledge"}, chatevent.TypeResponseDone, []string{"$49"}},
		{"clarify a vague request", "Update the document", []string{"clarify"}, nil, chatevent.TypeClarifyRequest, []string{"Which document"}},
		// The workflow's steps call two MCP tools, each reported.
		{"create a workflow", "Compare our pricing to competitors", []string{"workflow"}, []string{"knowledge__search_knowledge", "websearch__web_search"}, chatevent.TypeResponseDone, []string{"$49", "Northwind"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := chat(t, srv, "", tt.message)
			if diff := cmp.Diff(tt.decisions, tr.decisions()); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			tools := tr.tools()
			slices.Sort(tools) // a workflow's steps run in parallel
			if diff := cmp.Diff(tt.tools, tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			// Every tool.start says what the tool does, and its tool
			// ends: the page's bar turns done.
			for i, ev := range tr.events {
				start, ok := ev.Payload.(chatevent.ToolStart)
				if !ok {
					continue
				}
				if start.Message == "" {
					t.Errorf("tool.start of %s has no message", start.Tool)
				}
				if !slices.ContainsFunc(tr.events[i+1:], func(ev event.Event) bool {
					done, ok := ev.Payload.(chatevent.ToolComplete)
					return ok && done.Tool == start.Tool
				}) {
					t.Errorf("tool.start of %s has no tool.complete after it", start.Tool)
				}
			}
			if got := tr.last(); got != tt.last {
				t.Errorf("last event %s, want %s; events %v", got, tt.last, tr.types())
			}
			for _, w := range tt.want {
				if !strings.Contains(tr.answer(), w) {
					t.Errorf("answer lacks %q:\n%s", w, tr.answer())
				}
			}
			if got := tr.types()[0]; got != chatevent.TypeSupervisorThinking {
				t.Errorf("first event %s, want supervisor.thinking", got)
			}
			var usage *chatevent.TokenUsage
			for _, ev := range tr.events {
				if p, ok := ev.Payload.(chatevent.TokenUsage); ok {
					usage = &p
				}
			}
			if usage == nil || usage.Total() <= 0 || usage.InputTokens <= 0 || usage.OutputTokens <= 0 {
				t.Errorf("token usage %+v, want the turn's tokens counted", usage)
			}
		})
	}
}

// barrier returns a function that blocks until n callers are in it, so a
// test can prove that n calls run at the same time.
func barrier(n int) func(ctx context.Context) error {
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	return func(ctx context.Context) error {
		mu.Lock()
		arrived++
		if arrived == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Second):
			return errors.New("the other search never started: the searches do not run in parallel")
		}
	}
}

// bundledWith returns the bundled servers, with the handlers of the named
// tools wrapped by wrap.
func bundledWith(t *testing.T, wrap func(name string, h server.ToolHandlerFunc) server.ToolHandlerFunc, names ...string) []mcp.Server {
	t.Helper()
	var out []mcp.Server
	for _, b := range mcpservers.Bundled() {
		srv, err := b.New()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if st := srv.GetTool(name); st != nil {
				srv.AddTool(st.Tool, wrap(name, st.Handler))
			}
		}
		out = append(out, mcp.Server{Name: b.Name, InProcess: srv})
	}
	return out
}

// TestPricingWorkflowEvents checks the seed's event sequence for"Compare
// our pricing to competitors": the plan's four steps, the two searches
// (steps 2 and 3) running at the same time, then the answer.
func TestPricingWorkflowEvents(t *testing.T) {
	both := barrier(2)
	servers := bundledWith(t, func(_ string, h server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			if err := both(ctx); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}
	}, "search_knowledge", "web_search")
	_, srv := newServer(t, chatbot.Config{NoBundledServers: true, MCPServers: servers})
	tr := chat(t, srv, "", "Compare our pricing to competitors")

	var got []string
	for _, ev := range tr.events {
		switch p := ev.Payload.(type) {
		case chatevent.SupervisorThinking:
			got = append(got, "thinking")
		case chatevent.SupervisorDecided:
			got = append(got, "decided "+p.Action)
		case chatevent.WorkflowCreated:
			got = append(got, fmt.Sprintf("created %d", p.Steps))
		case chatevent.WorkflowStepStart:
			got = append(got, fmt.Sprintf("start %d", p.Step))
		case chatevent.WorkflowStepComplete:
			got = append(got, fmt.Sprintf("complete %d", p.Step))
			if p.Status != "" {
				t.Errorf("step %d %s: %s", p.Step, p.Status, p.Error)
			}
		case chatevent.WorkflowComplete:
			got = append(got, "workflow complete")
		case chatevent.ResponseChunk:
			if got[len(got)-1] != "chunk" {
				got = append(got, "chunk")
			}
		case chatevent.ResponseDone:
			got = append(got, "done")
		}
	}
	// Steps 2 and 3 both start before either completes (the barrier
	// guarantees it); the order within each pair is the scheduler's.
	want := []string{
		"thinking", "decided workflow", "created 4",
		"start 1", "complete 1",
		"start 2", "start 3", "complete 2", "complete 3",
		"start 4", "complete 4", "workflow complete",
		"chunk", "done",
	}
	if diff := cmp.Diff(want, normalizeStarts(got)); diff != "" {
		t.Errorf("event sequence (-want +got):\n%s\nall events: %v", diff, tr.types())
	}
	for _, w := range []string{"$49", "Northwind"} {
		if !strings.Contains(tr.answer(), w) {
			t.Errorf("answer lacks %q:\n%s", w, tr.answer())
		}
	}
}

// normalizeStarts orders the starts and the completions of parallel steps
// by step number, the order the seed shows them in.
func normalizeStarts(events []string) []string {
	out := append([]string(nil), events...)
	for i := 0; i < len(out); i++ {
		j := i
		kind := strings.Fields(out[i])[0]
		if kind != "start" && kind != "complete" {
			continue
		}
		for j+1 < len(out) && strings.Fields(out[j+1])[0] == kind {
			j++
		}
		sort.Strings(out[i : j+1])
		i = j
	}
	return out
}

// TestConversationFollowUp sends a follow-up that only makes sense with
// the first message: the second turn sees the conversation.
func TestConversationFollowUp(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	first := chat(t, srv, "conv-follow", "How much does the Team plan cost?")
	if !strings.Contains(first.answer(), "$49") {
		t.Fatalf("first answer lacks $49:\n%s", first.answer())
	}
	second := chat(t, srv, "conv-follow", "And the Business plan?")
	if !strings.Contains(second.answer(), "$89") {
		t.Errorf("follow-up answer lacks the Business price $89:\n%s", second.answer())
	}
	if diff := cmp.Diff([]string{"search_knowledge"}, second.tools()); diff != "" {
		t.Errorf("follow-up tools (-want +got):\n%s", diff)
	}

	resp, err := http.Get(srv.URL + "/api/v1/chat/conv-follow/history")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var hist struct {
		ConversationID string                   `json:"conversation_id"`
		Messages       []chatbot.HistoryMessage `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&hist); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range hist.Messages {
		roles = append(roles, m.Role+": "+firstWords(m.Content, 4))
	}
	want := []string{"user: How much does the", "assistant: Here is what I", "user: And the Business plan?", "assistant: Here is what I"}
	if diff := cmp.Diff(want, roles); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}
