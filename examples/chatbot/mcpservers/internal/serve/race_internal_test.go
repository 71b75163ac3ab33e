package serve

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// A GET whose session ends after the handler checked it, before the MCP
// server takes up the stream, is refused with 404 and does not open the
// session again.
func TestGetOnSessionEndingMeanwhile(t *testing.T) {
	h, err := NewHandler(server.NewMCPServer("t", "1.0.0"), Auth{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		hs.Close()
	})
	do := func(method, id, body string) *http.Response {
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, err := http.NewRequestWithContext(t.Context(), method, hs.URL, r)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("initialize gave no session ID")
	}
	testHookSessionChecked = func(h *Handler, id string) { h.end(id) }
	defer func() { testHookSessionChecked = nil }()
	resp = do(http.MethodGet, id, "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET on a session ended meanwhile: status %d, want 404", resp.StatusCode)
	}
	testHookSessionChecked = nil
	resp = do(http.MethodPost, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST on the ended session after the GET: status %d, want 404", resp.StatusCode)
	}
}
