package bosai_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/bosai"
	"github.com/agentgraph/agentgraph/examples/internal/stalltest"
)

// TestHTTPSSEWriteStall: a client that stops reading its stream holds the
// handler for HTTPConfig.WriteStall per write, not forever.
func TestHTTPSSEWriteStall(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	h, err := bosai.Handler(bot, bosai.HTTPConfig{WriteStall: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	stalltest.CheckWriteStall(t, h, "/v1/ask", `{"question": "How many customers are there?"}`)
}

func TestHTTPWriteStallInvalid(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	if _, err := bosai.Handler(bot, bosai.HTTPConfig{WriteStall: -time.Second}); err == nil {
		t.Error("Handler with a negative WriteStall: no error")
	}
}

// quietStall is the WriteStall of the quiet-stream test and quietFor the
// model's delay before each reply: the stream is quiet for three times the
// stall between events, while a write that a loaded machine is slow to
// make (its HTTP/2 frames go through the connection's own goroutine)
// still has half a second.
const quietStall, quietFor = 500 * time.Millisecond, 1500 * time.Millisecond

// TestHTTP2QuietStream: over HTTP/2 a stream quiet for longer than
// WriteStall between events is not reset: the write deadline is lifted
// after each event.
func TestHTTP2QuietStream(t *testing.T) {
	slow := llmtest.New().Default(llmtest.Reply{Delay: quietFor, Model: bosai.NewOfflineModel()})
	bot := newBot(t, slow, bosai.Config{})
	h, err := bosai.Handler(bot, bosai.HTTPConfig{WriteStall: quietStall})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/ask", strings.NewReader(`{"question": "How many customers are there?"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("served over %s, want HTTP/2", resp.Proto)
	}
	if err != nil || !strings.Contains(string(body), "event: response") {
		t.Errorf("status %d, %v, body %q; want the response event", resp.StatusCode, err, body)
	}
}
