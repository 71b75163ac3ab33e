package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// A body of the wrong JSON type is refused with the kind expected, not
// the Go type the server decodes it into.
func TestBodyOfWrongType(t *testing.T) {
	url := serveChain(t, server.Config{})
	for _, path := range []string{"/threads", "/threads/search", "/threads/count", "/threads/prune", "/runs/wait"} {
		for _, b := range []string{`[]`, `"x"`, `12`, `true`} {
			resp, err := http.Post(url+path, "application/json", strings.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 422 || !strings.Contains(string(got), "the body must be an object") || strings.Contains(string(got), "Go value") {
				t.Fatalf("POST %s %s: %d %s; want 422 saying the body must be an object", path, b, resp.StatusCode, got)
			}
		}
	}
}

// A path served with other methods answers 405 naming them in Allow; a
// path served with none answers 404.
func TestMethodNotAllowed(t *testing.T) {
	url := serveChain(t, server.Config{})
	for _, c := range []struct{ method, path, allow string }{
		{"PUT", "/threads", "POST"},
		{"GET", "/runs/wait", "POST"},
		{"PATCH", "/threads/0aaaaaaa-46ac-7f1b-956c-95867187d56d/copy", "POST"},
		{"PUT", "/threads/0aaaaaaa-46ac-7f1b-956c-95867187d56d", "GET, PATCH, DELETE"},
		{"DELETE", "/ok", "GET"},
	} {
		req, err := http.NewRequest(c.method, url+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != c.allow || !strings.Contains(string(b), c.allow) {
			t.Fatalf("%s %s: %d Allow %q %s; want 405 with Allow %q", c.method, c.path, resp.StatusCode, resp.Header.Get("Allow"), b, c.allow)
		}
	}
	if code := do(t, "GET", url+"/no/such/path", nil, nil, nil); code != 404 {
		t.Fatalf("GET /no/such/path: %d; want 404", code)
	}
}
