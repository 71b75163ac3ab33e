package server_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestRefusedBodyHoldsNoConnection: a request the server refuses before
// reading its body (no credentials, a foreign Origin, a form body, a
// Host beyond loopback without credentials) whose body never arrives is
// answered at once with "Connection: close", and its connection closes
// without waiting for the body, even with a BodyTimeout far longer than
// the test waits: otherwise net/http waits for up to 256 KiB of the body
// before answering, with no deadline but BodyTimeout's.
func TestRefusedBodyHoldsNoConnection(t *testing.T) {
	authed := newTestServer(t, server.Config{BodyTimeout: time.Hour, Authenticate: apiKeys(t, map[string]string{"key-a-0123456789": "alice"})})
	open := newTestServer(t, server.Config{BodyTimeout: time.Hour})
	const post = "POST /threads HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100000"
	cases := []struct {
		name, url, host, head, status string
	}{
		{"no credentials", authed.URL, "127.0.0.1", post, "401"},
		{"no credentials, chunked", authed.URL, "127.0.0.1", "POST /threads HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked", "401"},
		{"foreign origin", authed.URL, "127.0.0.1", post + "\r\nOrigin: https://evil.example\r\nX-Api-Key: key-a-0123456789", "403"},
		{"form body", authed.URL, "127.0.0.1", strings.Replace(post, "application/json", "application/x-www-form-urlencoded", 1) + "\r\nX-Api-Key: key-a-0123456789", "415"},
		{"foreign host, no credentials", open.URL, "evil.example", post, "403"},
	}
	answers, errs := make([]string, len(cases)), make([]error, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() { answers[i], errs[i] = unfinishedBody(strings.TrimPrefix(c.url, "http://"), c.host, c.head) })
	}
	wg.Wait()
	for i, c := range cases {
		if errs[i] != nil {
			t.Errorf("%s: %v", c.name, errs[i])
			continue
		}
		if !strings.HasPrefix(answers[i], "HTTP/1.1 "+c.status+" ") || !strings.Contains(answers[i], "\r\nConnection: close\r\n") {
			t.Errorf("%s: answer %q; want %s with Connection: close", c.name, answers[i], c.status)
		}
	}
	// A body sent whole is still served, on a new connection.
	var th map[string]any
	if code := do(t, "POST", authed.URL+"/threads", map[string]any{}, http.Header{"Authorization": {"bearer key-a-0123456789"}}, &th); code != 200 || th["thread_id"] == nil {
		t.Fatalf("create thread with a lower-case bearer scheme: %d %v", code, th)
	}
}

// unfinishedBody sends head (without Host and the blank line), Host host
// and the first byte of a body that never ends, on a new connection to
// addr, and returns what the server answered before it closed the
// connection, or an error when it kept it open for 30 s.
func unfinishedBody(addr, host, head string) (string, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	body := "{"
	if strings.Contains(head, "chunked") {
		body = "5\r\n{\"a\":"
	}
	if _, err := fmt.Fprintf(conn, "%s\r\nHost: %s\r\n\r\n%s", head, host, body); err != nil {
		return "", err
	}
	// The test's own bound, far beyond what the server should take.
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return "", err
	}
	got, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return string(got), fmt.Errorf("the server held the connection for 30s with the body unfinished; answered %q", got)
	}
	return string(got), nil
}
