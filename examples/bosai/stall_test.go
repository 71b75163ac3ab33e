package bosai_test

import (
	"fmt"
	"net"
	"net/http/httptest"
	"testing"
	"time"

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
	srv := httptest.NewUnstartedServer(h)
	ln := stalltest.New(srv.Listener)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	body := `{"question": "How many customers are there?"}`
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	select {
	case <-ln.TimedOut():
	case <-time.After(60 * time.Second):
		t.Fatal("a write to a client that does not read has blocked for 60s with WriteStall 50ms")
	}
}

func TestHTTPWriteStallInvalid(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	if _, err := bosai.Handler(bot, bosai.HTTPConfig{WriteStall: -time.Second}); err == nil {
		t.Error("Handler with a negative WriteStall: no error")
	}
}
