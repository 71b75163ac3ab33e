package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestAsk runs one turn in the terminal: progress on stderr, the answer on
// stdout.
func TestAsk(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"ask", "-offline", "-data", t.TempDir(), "What is 15% of 240?"}, strings.NewReader(""), &stdout, &stderr)
	if err != nil {
		t.Fatalf("ask: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "= 36") {
		t.Errorf("stdout lacks the answer:\n%s", stdout.String())
	}
	for _, want := range []string{"demo mode", "CALL_TOOL", "⚙ calculate", "✓ calculate", "tokens"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if err := run(context.Background(), []string{"ask", "-offline"}, nil, io.Discard, io.Discard); err == nil {
		t.Error("ask with no question succeeded")
	}
}

// TestServe starts the server, asks it one question, then stops it as a
// signal would.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-offline", "-addr", "127.0.0.1:0", "-data", t.TempDir()}, nil, w, io.Discard)
		w.Close()
	}()
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("no output: %v", <-done)
	}
	first := lines.Text()
	i := strings.Index(first, "http://")
	if i < 0 {
		t.Fatalf("first line %q has no URL", first)
	}
	url := strings.Fields(first[i:])[0]
	go func() {
		for lines.Scan() {
		}
	}()

	resp, err := http.Post(url+"/api/v1/chat/sync", "application/json", strings.NewReader(`{"message": "Hello!"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Response string }
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || !strings.HasPrefix(got.Response, "Hello!") {
		t.Errorf("answer %q, %v", got.Response, err)
	}
	http.DefaultClient.CloseIdleConnections()

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}
