package offline_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
)

const streamBody = `{"model":"x","stream":true,"messages":[{"role":"user","content":"Compare our pricing to competitors, in detail"}]}`

// TestTransportCancel cancels a streamed answer after its first frame: the
// read fails with the context's error and the handler's goroutine ends
// (TestMain checks for leaks).
func TestTransportCancel(t *testing.T) {
	m := offline.New(offline.Config{ChunkRunes: 1}) // many frames
	client := &http.Client{Transport: m.Transport()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://offline/v1/chat/completions", strings.NewReader(streamBody))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "data: ") {
		t.Fatalf("first line %q, %v", sc.Text(), sc.Err())
	}
	cancel()
	for sc.Scan() {
	}
	if err := sc.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("reading after the cancel: %v, want context.Canceled", err)
	}
}

// TestTransportCloseEarly closes a streamed body after one line: the
// handler stops writing and its goroutine ends.
func TestTransportCloseEarly(t *testing.T) {
	m := offline.New(offline.Config{ChunkRunes: 1})
	client := &http.Client{Transport: m.Transport()}
	for range 20 {
		resp, err := client.Post("http://offline/v1/chat/completions", "application/json", strings.NewReader(streamBody))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
}

func TestTransportCancelledBeforehand(t *testing.T) {
	m := offline.New(offline.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://offline/v1/models", nil)
	if _, err := (&http.Client{Transport: m.Transport()}).Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
