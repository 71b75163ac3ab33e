package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestThreadIDWithSeparatorRefused: a thread id holding "|", the
// separator of a subgraph's checkpoint thread (graph.SubgraphThread:
// parent "|" task), is refused with 422 naming thread_id and the fix,
// whether it is created (POST /threads, a run's if_not_exists) or named
// in a path: the checkpoint threads the server deletes with a thread
// ("a" and "a|<task>") can never be another thread's.
func TestThreadIDWithSeparatorRefused(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	const id = "01a21cf9-129f-7000-8004-e97015104bc5|1:node:0"
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/threads", `{"thread_id":"` + id + `"}`},
		{"POST", "/threads/" + url.PathEscape(id) + "/runs/wait", `{"assistant_id":"agent","if_not_exists":"create"}`},
		{"GET", "/threads/" + url.PathEscape(id), ""},
		{"DELETE", "/threads/" + url.PathEscape(id), ""},
	} {
		req, err := http.NewRequest(c.method, ts.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Detail string }
		if resp.StatusCode != 422 || json.Unmarshal(b, &e) != nil || !strings.HasPrefix(e.Detail, "thread_id: ") || !strings.Contains(e.Detail, "use a UUID") {
			t.Errorf("%s %s: %d %s; want 422 naming thread_id and the fix", c.method, c.path, resp.StatusCode, b)
		}
	}
}
