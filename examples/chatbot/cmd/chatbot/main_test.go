package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
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
	for _, want := range []string{"demo mode", "call_tool", "⚙ calculate", "✓ calculate", "tokens"} {
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

// TestServeNeedsAuthBeyondLoopback: serve refuses an address beyond
// loopback without tokens, saying how to set them, and serves it with
// CHATBOT_TOKENS, requiring the token.
func TestServeNeedsAuthBeyondLoopback(t *testing.T) {
	err := run(t.Context(), []string{"-offline", "-addr", ":0", "-data", t.TempDir()}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "CHATBOT_TOKENS") || !strings.Contains(err.Error(), "-tokens") {
		t.Fatalf("serve on every interface without tokens: %v, want an error saying how to set tokens", err)
	}
	// A proxy's name (-allow-host) would expose the open demo too.
	err = run(t.Context(), []string{"-offline", "-allow-host", "chat.example.com", "-data", t.TempDir()}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-allow-host") || !strings.Contains(err.Error(), "-tokens") {
		t.Fatalf("serve with -allow-host beyond loopback without tokens: %v, want an error naming -allow-host and how to set tokens", err)
	}
	t.Setenv("CHATBOT_TOKENS", "alice=alice-token-0123456789")
	url, stop := startServe(t, "-offline", "-addr", "0.0.0.0:0", "-data", t.TempDir())
	defer stop()
	req, _ := http.NewRequest(http.MethodPost, url+"/api/v1/chat/sync", strings.NewReader(`{"message": "Hello!"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %s, want 401", resp.Status)
	}
	req, _ = http.NewRequest(http.MethodPost, url+"/api/v1/chat/sync", strings.NewReader(`{"message": "Hello!"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer alice-token-0123456789")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with the token: %s, want 200", resp.Status)
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestServeClosesIdleConnections: a keep-alive connection left idle is
// closed by the server after its idle timeout.
func TestServeClosesIdleConnections(t *testing.T) {
	defer func(d time.Duration) { idleTimeout = d }(idleTimeout)
	idleTimeout = 200 * time.Millisecond
	url, stop := startServe(t, "-offline", "-addr", "127.0.0.1:0", "-data", t.TempDir())
	defer stop()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /health HTTP/1.1\r\nHost: %s\r\n\r\n", strings.TrimPrefix(url, "http://"))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("reading the idle connection: %v, want EOF (closed by the server)", err)
	}
}

// TestLoadTokens reads tokens from a file and from CHATBOT_TOKENS.
func TestLoadTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("# principals\nalice alice-token-0123456789\n\nbob bob-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := loadTokens(path, "carol=carol-token-0123456789, dave=dave-token-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"alice-token-0123456789": "alice", "bob-token-0123456789": "bob",
		"carol-token-0123456789": "carol", "dave-token-0123456789": "dave"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tokens %v, want %v", got, want)
	}
	for _, env := range []string{"alice", "alice=", "=tok"} {
		if _, err := loadTokens("", env); err == nil || !strings.Contains(err.Error(), "CHATBOT_TOKENS") {
			t.Errorf("CHATBOT_TOKENS=%q: %v, want an error naming it", env, err)
		}
	}
}

// startServe runs serve with args until stop, and returns its URL.
func startServe(t *testing.T, args ...string) (url string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, nil, w, io.Discard)
		w.Close()
	}()
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		cancel()
		t.Fatalf("no output: %v", <-done)
	}
	first := lines.Text()
	i := strings.Index(first, "http://")
	if i < 0 {
		cancel()
		t.Fatalf("first line %q has no URL", first)
	}
	go func() {
		for lines.Scan() {
		}
	}()
	return strings.Fields(first[i:])[0], func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	}
}

// TestServeStopsPromptlyWithUnansweredQuestion stops serve, as SIGTERM
// does, while a turn waits for an answer no one will give, with a drain
// of 5 minutes: the turn's stream gets an error event saying the server
// is shutting down, and serve returns without waiting for the drain.
func TestServeStopsPromptlyWithUnansweredQuestion(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-offline", "-addr", "127.0.0.1:0", "-drain", "5m", "-data", t.TempDir()}, nil, w, io.Discard)
		w.Close()
	}()
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("no output: %v", <-done)
	}
	url := strings.Fields(lines.Text()[strings.Index(lines.Text(), "http://"):])[0]
	go func() {
		for lines.Scan() {
		}
	}()
	resp, err := http.Post(url+"/api/v1/chat", "application/json", strings.NewReader(`{"message": "I would like to book a demo"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var types []event.Type
	var last event.Event
	for ev, err := range chatevent.ReadEvents(resp.Body) {
		if err != nil {
			break
		}
		types = append(types, ev.Type)
		last = ev
		if ev.Type == chatevent.TypeElicitationRequest {
			cancel() // SIGTERM
		}
	}
	if p, ok := last.Payload.(event.Error); !ok || p.Code != "shutting_down" {
		t.Errorf("the stream ended with %+v (events %v), want an error event with code shutting_down", last, types)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve was still draining 30s after SIGTERM")
	}
}
