package guard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server/guard"
)

// post sends body to url with the headers (name, value pairs) and
// returns the answer's status and whether the request went over a
// connection an earlier request used; a transport error fails the test.
func post(t *testing.T, c *http.Client, url, body string, headers ...string) (status int, reused bool) {
	t.Helper()
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s with %d bytes, headers %q: %v; want the refusal", url, len(body), headers, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, reused
}

// TestRefusedWholeBodyGetsItsAnswer: a refused request whose whole body
// the client sent (far more than the server's read buffer) gets the
// refusal, not a reset connection, for each rule that refuses after the
// headers (no token, wrong media type, too many streams), whether the
// body is under net/http's 256 KiB of discarding or over it; a small
// refused body is read and discarded and the connection is kept for the
// next request.
func TestRefusedWholeBodyGetsItsAnswer(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	_, srv := newServer(t, guard.Config{Tokens: twoTokens, MaxStreams: 1,
		Streaming: func(r *http.Request) bool { return r.URL.Path == "/stream" }},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("hold") != "" {
				started <- struct{}{}
				<-release
			}
		}))
	held := make(chan struct{})
	go func() {
		defer close(held)
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+"/stream?hold=1", nil)
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		if resp, err := srv.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	defer func() { close(release); <-held }()

	for _, size := range []int{100 << 10, 4 << 20} {
		big := `{"a":"` + strings.Repeat("x", size) + `"}`
		c := &http.Client{Transport: &http.Transport{}}
		cases := []struct {
			name, path, body string
			headers          []string
			want             int
		}{
			{"no token", "/api", big, nil, http.StatusUnauthorized},
			{"expired token", "/api", big, []string{"Authorization", "Bearer " + strings.Repeat("x", 24)}, http.StatusUnauthorized},
			{"media type", "/api", big, []string{"Authorization", "Bearer " + aliceToken, "Content-Type", "text/plain"}, http.StatusUnsupportedMediaType},
			{"too many streams", "/stream", big, []string{"Authorization", "Bearer " + aliceToken}, http.StatusTooManyRequests},
		}
		for _, tc := range cases {
			if got, _ := post(t, c, srv.URL+tc.path, tc.body, tc.headers...); got != tc.want {
				t.Errorf("%s, %d bytes: %d, want %d", tc.name, len(tc.body), got, tc.want)
			}
		}
		c.CloseIdleConnections()
	}

	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	small := `{"a":"` + strings.Repeat("x", 200) + `"}`
	if got, _ := post(t, c, srv.URL+"/api", small); got != http.StatusUnauthorized {
		t.Fatalf("small body without a token: %d, want 401", got)
	}
	if got, reused := post(t, c, srv.URL+"/api", small); got != http.StatusUnauthorized || !reused {
		t.Errorf("second small refused body: %d, connection reused %v; want 401 on the same connection", got, reused)
	}
	if got, reused := post(t, c, srv.URL+"/api", small, "Authorization", "Bearer "+aliceToken); got != http.StatusOK || !reused {
		t.Errorf("then an authenticated request: %d, connection reused %v; want 200 on the same connection", got, reused)
	}
}
