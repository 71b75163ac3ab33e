package guard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server/guard"
)

// BenchmarkHandler is the guard's cost per request, in-process (no
// network): an authenticated JSON POST that counts as a stream, its body
// read by the handler.
func BenchmarkHandler(b *testing.B) {
	g, err := guard.New(guard.Config{Tokens: map[string]string{"alice-token-0123456789": "alice"},
		Streaming: func(r *http.Request) bool { return true }})
	if err != nil {
		b.Fatal(err)
	}
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if guard.Principal(r.Context()) != "alice" {
			b.Fatal("no principal")
		}
	}))
	const body = `{"message": "hello"}`
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/api", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer alice-token-0123456789")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}

// BenchmarkBare is BenchmarkHandler's request without the guard, the
// baseline of its cost.
func BenchmarkBare(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) })
	const body = `{"message": "hello"}`
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/api", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer alice-token-0123456789")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
	}
}

// BenchmarkOpenHandler is the guard's cost per request of an open guard
// (the proxy-header rule runs) for a browser's same-origin JSON POST
// with the headers a browser sends (the Origin rule runs).
func BenchmarkOpenHandler(b *testing.B) {
	g, err := guard.New(guard.Config{})
	if err != nil {
		b.Fatal(err)
	}
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	const body = `{"message": "hello"}`
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/api", strings.NewReader(body))
		r.RemoteAddr = "127.0.0.1:50000"
		for k, v := range map[string]string{"Content-Type": "application/json", "Origin": "http://127.0.0.1:8080",
			"Referer": "http://127.0.0.1:8080/", "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0",
			"Accept": "*/*", "Accept-Language": "en-US,en;q=0.5", "Accept-Encoding": "gzip, deflate, br, zstd",
			"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty", "Connection": "keep-alive",
			"Priority": "u=4"} {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}
