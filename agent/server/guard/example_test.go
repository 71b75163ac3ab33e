package guard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agentgraph/agentgraph/agent/server/guard"
)

// A JSON API behind a guard with one bearer token: requests without it get
// 401, a cross-site form gets 403, and the handler finds the caller's
// principal in the request's context.
func Example() {
	g, err := guard.New(guard.Config{Tokens: map[string]string{"alice-token-0123456789": "alice"}})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /notes", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s wrote %s", guard.Principal(r.Context()), b)
	})
	// A program listens with g.Listen(ctx, addr) and serves with
	// g.Server(mux).Serve(ln); the test server stands in for both.
	srv := httptest.NewServer(g.Handler(mux))
	defer srv.Close()

	send := func(token, contentType, origin string) {
		req, _ := http.NewRequest("POST", srv.URL+"/notes", strings.NewReader(`{"text":"hi"}`))
		req.Header.Set("Content-Type", contentType)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, strings.TrimSpace(string(b)))
	}
	send("", "application/json", "")
	send("alice-token-0123456789", "text/plain", "https://evil.example")
	send("alice-token-0123456789", "application/json", "")
	// Output:
	// 401 {"error":"guard: not authenticated; send the header Authorization: Bearer \u003ctoken\u003e","field":"Authorization"}
	// 403 {"error":"guard: cross-origin request from \"https://evil.example\" refused; add the origin to Config.AllowedOrigins","field":"Origin"}
	// 200 alice wrote {"text":"hi"}
}

// An open guard (no tokens) serves this machine only: it refuses to
// listen on every interface.
func ExampleGuard_Listen() {
	g, _ := guard.New(guard.Config{})
	_, err := g.Listen(context.Background(), ":8080")
	fmt.Println(err)
	ln, err := g.Listen(context.Background(), "127.0.0.1:0")
	fmt.Println(err)
	ln.Close()
	// Output:
	// guard: listening on ":8080", beyond this machine, needs authentication: set Config.Tokens or Config.Authenticate, or listen on loopback only (such as 127.0.0.1:8080)
	// <nil>
}
