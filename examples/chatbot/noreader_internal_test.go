package chatbot

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/examples/supervisor"
)

// TestResumableTurnWithoutReaderStops: a resumable turn whose client went
// away, and whose events then fill its buffers (ResumeReplay in the
// stream), does not hold the one running slot until TurnTimeout: once its
// events have waited unread for ResumeWait it is stopped, another
// principal's turn runs, and the client that resumes it gets the kept
// events, then a no_reader error that says why.
func TestResumableTurnWithoutReaderStops(t *testing.T) {
	const aliceToken, bobToken = "alice-token-0123456789abcdef", "bob-token-0123456789abcdef00"
	// An answer of some 2,000 response.chunk events: far more than the
	// emitter's queue and the stream's ResumeReplay hold.
	long := strings.Repeat("All work and no play makes a long answer. ", 1200)
	model := llmtest.New().Default(llmtest.JSON(supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "known", Response: long}))
	b, err := New(context.Background(), Config{Model: model, DataDir: t.TempDir(), Tokens: map[string]string{aliceToken: "alice", bobToken: "bob"},
		MaxRunningTurns: 1, TurnTimeout: 10 * time.Minute, WriteStall: time.Second,
		ResumeReplay: 8, ResumeWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Bounded: with the turn still waiting (the defect this test
		// finds), Close would wait for TurnTimeout.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Close(ctx)
	})
	h := b.Handler()
	plain := httptest.NewServer(h)
	defer plain.Close()
	pipes := newPipeListener()
	serveOn(t, pipes, h)

	// Alice's resumable turn over a connection that reads its status
	// line, then nothing: its writer is disconnected after WriteStall,
	// and no client comes back.
	body, _ := json.Marshal(map[string]any{"conversation_id": "alice-1", "request_id": "r-gone", "resumable": true, "message": "Tell me everything"})
	conn := b.testDial(t, pipes)
	defer conn.Close()
	go func() {
		_, _ = conn.Write([]byte("POST /api/v1/chat HTTP/1.1\r\nHost: chat.example.com\r\nAuthorization: Bearer " + aliceToken + "\r\n" +
			"Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body)))
	}()
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute)) // bounds a broken test only
	status := make([]byte, len("HTTP/1.1 200"))
	if _, err := conn.Read(status); err != nil || string(status) != "HTTP/1.1 200" {
		t.Fatalf("alice's turn: status %q, %v; want HTTP/1.1 200", status, err)
	}

	// Bob's turn gets the running slot long before TurnTimeout.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // bounds a broken test only
	defer cancel()
	resp, err := http.DefaultClient.Do(bobChat(t, plain.URL, bobToken).WithContext(ctx))
	if err != nil {
		t.Fatalf("bob's turn while alice's turn waits for a reader: %v", err)
	}
	evs := readSSE(t, resp.Body)
	resp.Body.Close()
	if len(evs) == 0 || evs[len(evs)-1].Type != chatevent.TypeResponseDone {
		t.Fatalf("bob's turn: %d events, want it answered", len(evs))
	}

	// Alice resumes: the kept events, then why the turn stopped.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, plain.URL+"/api/v1/chat/stream/r-gone", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	evs = readSSE(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(evs) == 0 {
		t.Fatalf("resuming alice's turn: %d, %d events", resp.StatusCode, len(evs))
	}
	last, ok := evs[len(evs)-1].Payload.(event.Error)
	if !ok || last.Code != "no_reader" || !strings.Contains(last.Message, "waited unread") {
		t.Errorf("alice's resumed turn ends with %+v; want a no_reader error saying why", evs[len(evs)-1])
	}
}
