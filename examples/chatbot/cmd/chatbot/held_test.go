package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeDropsUnfinishedRefusedBodies: the server with tokens answers
// a request without the token whose body never arrives (401), and one
// from a foreign origin (403), at once, and closes its connection instead
// of holding it for as long as the client keeps quiet; "bearer" in lower
// case authenticates.
func TestServeDropsUnfinishedRefusedBodies(t *testing.T) {
	t.Setenv("CHATBOT_TOKENS", "alice=alice-token-0123456789")
	url, stop := startServe(t, "-offline", "-addr", "127.0.0.1:0", "-data", t.TempDir())
	defer stop()
	addr := strings.TrimPrefix(url, "http://")
	for _, c := range []struct{ extra, status string }{
		{"", "401"},
		{"Origin: https://evil.example\r\n", "403"},
		{"Origin: https://" + addr + "\r\n", "403"}, // the page's origin is http://
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /api/v1/chat HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n%s\r\n{", addr, c.extra)
		// The test's own bound, far beyond what the server should take.
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		got, err := io.ReadAll(conn)
		conn.Close()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%q: the server held the connection for 30s with the body unfinished; answered %q", c.extra, got)
		}
		if !strings.HasPrefix(string(got), "HTTP/1.1 "+c.status+" ") {
			t.Errorf("%q: answer %q, want %s", c.extra, got, c.status)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/api/v1/chat/sync", strings.NewReader(`{"message": "Hello!"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "bearer alice-token-0123456789")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("lower-case bearer: %s, want 200", resp.Status)
	}
	http.DefaultClient.CloseIdleConnections()
}
