package chatbot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/sse"
	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// newServer starts a bot on the offline model with SQLite storage in a
// temporary directory, behind an HTTP test server.
func newServer(t *testing.T, cfg chatbot.Config) (*chatbot.Bot, *httptest.Server) {
	t.Helper()
	cfg.Offline = true
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	bot, err := chatbot.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(bot.Handler())
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := bot.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return bot, srv
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
		if p, ok := ev.Payload.(event.ResponseChunk); ok {
			sb.WriteString(p.Content)
		}
	}
	return sb.String()
}

func (tr turn) decisions() []string {
	var out []string
	for _, ev := range tr.events {
		if p, ok := ev.Payload.(event.SupervisorDecided); ok {
			out = append(out, p.Action)
		}
	}
	return out
}

func (tr turn) tools() []string {
	var out []string
	for _, ev := range tr.events {
		if p, ok := ev.Payload.(event.ToolStart); ok {
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
	resp := postJSON(t, srv.URL+"/api/v1/chat", map[string]string{"conversation_id": conv, "message": msg})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/v1/chat: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	var tr turn
	for ev, err := range sse.ReadEvents(resp.Body) {
		if err != nil {
			t.Fatalf("reading events: %v", err)
		}
		tr.events = append(tr.events, ev)
	}
	for i, ev := range tr.events {
		if ev.Seq != uint64(i+1) {
			t.Errorf("event %d (%s) has seq %d", i, ev.Type, ev.Seq)
		}
		if ev.Type == event.TypeError {
			t.Errorf("error event: %+v", ev.Payload)
		}
	}
	return tr
}

func TestSmoke(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	for _, q := range []string{"Hello!", "What is 15% of 240?", "How much does the Team plan cost?", "Update the document", "Compare our pricing to competitors"} {
		tr := chat(t, srv, "smoke", q)
		t.Logf("%s: %v %v %v\n%s", q, tr.types(), tr.decisions(), tr.tools(), tr.answer())
	}
}
