package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestCrossSiteRequestWithoutOrigin: browsers send no Origin with a
// cross-site GET of an <img>, a <script> or a no-cors fetch, but say
// Sec-Fetch-Site: cross-site. Such a request is refused, so that a page of
// another site cannot act on a loopback server without authentication
// (a join with cancel_on_disconnect cancels the run when the page drops
// it); without Authenticate, so is one a page of another origin of the
// same site makes (same-site: the site has no port, and another port of
// this machine may serve any page, as a loopback page's Origin is not
// allowed without Authenticate either); the same request from the API's
// own origin, or from a client that is not a browser, is served.
func TestCrossSiteRequestWithoutOrigin(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	for _, c := range []struct {
		site string
		want int
	}{{"cross-site", 403}, {"same-site", 403}, {"same-origin", 200}, {"none", 200}, {"", 200}} {
		var h http.Header
		if c.site != "" {
			h = http.Header{"Sec-Fetch-Site": {c.site}}
		}
		var e map[string]any
		if code := do(t, "GET", ts.URL+"/threads/"+tid, nil, h, &e); code != c.want {
			t.Errorf("GET with Sec-Fetch-Site %q and no Origin: %d %v; want %d", c.site, code, e, c.want)
		} else if code == 403 && !strings.Contains(fmt.Sprint(e["detail"]), "Sec-Fetch-Site") {
			t.Errorf("refusal does not name Sec-Fetch-Site: %v", e)
		}
	}
	// With an Origin the origin rule decides: the API's own page is
	// served, another loopback page is not, without Authenticate.
	if code := do(t, "GET", ts.URL+"/threads/"+tid, nil, http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {ts.URL}}, nil); code != 200 {
		t.Errorf("cross-site GET from the API's own origin: %d; want 200", code)
	}
	if code := do(t, "GET", ts.URL+"/threads/"+tid, nil, http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"http://localhost:3000"}}, nil); code != 403 {
		t.Errorf("cross-site GET from another loopback page: %d; want 403", code)
	}
}

// TestAttackRound5Refusals: edge inputs of the fifth attack round that
// the server already refuses (or serves) as it should; each row is one
// attack and the answer it must get.
func TestAttackRound5Refusals(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, rid := interruptedThread(t, ts.URL, nil)
	th := "/threads/" + tid
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	for _, c := range []struct {
		name, method, path, body string
		header                   map[string]string
		code                     int
		detail                   string // a prefix of the detail, when set
	}{
		{"metadata nested 20000 deep", "POST", "/threads", `{"metadata":` + deep + `}`, nil, 422, "metadata: nests objects and arrays deeper than 256 levels"},
		{"filter nested 20000 deep", "POST", "/threads/search", `{"metadata":{"x":` + deep + `}}`, nil, 422, "metadata: nests objects and arrays deeper than 256 levels"},
		{"body of 200000 ['s", "POST", "/threads", strings.Repeat("[", 200000), nil, 422, "the body: nests objects and arrays deeper than 256 levels"},
		{"unicode thread id", "GET", "/threads/%E2%9C%93", "", nil, 422, "thread_id: "},
		{"NUL thread id", "GET", "/threads/%00", "", nil, 422, "thread_id: "},
		{"search limit -1", "POST", "/threads/search", `{"limit":-1}`, nil, 422, "limit: "},
		{"search limit 1e4", "POST", "/threads/search", `{"limit":1e4}`, nil, 422, "limit: "}, // 1e3 is taken as 1000
		{"search limit 10.5", "POST", "/threads/search", `{"limit":10.5}`, nil, 422, "limit: "},
		{"search offset beyond int64", "POST", "/threads/search", `{"offset":99999999999999999999}`, nil, 422, "offset: "},
		{"search offset max int64", "POST", "/threads/search", `{"offset":9223372036854775807}`, nil, 200, ""},
		{"history limit -1", "POST", th + "/history", `{"limit":-1}`, nil, 422, "limit: "},
		{"history limit 1e9", "GET", th + "/history?limit=1000000000", "", nil, 422, "limit: "},
		{"runs offset max int64", "GET", th + "/runs?offset=9223372036854775807", "", nil, 200, ""},
		{"runs limit 0", "GET", th + "/runs?limit=0", "", nil, 422, "limit: "},
		{"assistants limit -1", "POST", "/assistants/search", `{"limit":-1}`, nil, 422, "limit and offset: "},
		{"Last-Event-ID abc", "GET", th + "/runs/" + rid + "/stream", "", map[string]string{"Last-Event-ID": "abc"}, 422, "Last-Event-ID: "},
		{"Last-Event-ID beyond int64", "GET", th + "/runs/" + rid + "/stream", "", map[string]string{"Last-Event-ID": "99999999999999999999"}, 422, "Last-Event-ID: "},
		{"Last-Event-ID -2", "GET", th + "/runs/" + rid + "/stream", "", map[string]string{"Last-Event-ID": "-2"}, 422, "Last-Event-ID: "},
		{"command goto unknown node", "POST", th + "/runs/wait", `{"assistant_id":"agent","command":{"resume":"ok","goto":"nope"}}`, nil, 422, "command.goto: "},
		{"command update and input", "POST", th + "/runs/wait", `{"assistant_id":"agent","input":{},"command":{"update":{"approved":"x"}}}`, nil, 422, "input and command.update"},
		{"as_node unknown", "POST", th + "/state", `{"values":{"approved":"x"},"as_node":"nope"}`, nil, 422, "as_node: "},
		{"as_node __end__", "POST", th + "/state", `{"values":{"approved":"x"},"as_node":"__end__"}`, nil, 422, "as_node: "},
		{"assistant unknown", "GET", "/assistants/nope", "", nil, 404, `assistant "nope" not found`},
		{"run of an unknown assistant", "POST", "/runs/wait", `{"assistant_id":"nope"}`, nil, 404, `assistant "nope" not found`},
		{"stream mode unknown", "POST", "/runs/wait", `{"assistant_id":"agent","stream_mode":["bogus"]}`, nil, 422, "stream_mode: "},
		{"multitask_strategy unknown", "POST", th + "/runs", `{"assistant_id":"agent","multitask_strategy":"bogus"}`, nil, 422, "multitask_strategy: "},
		{"cancel action unknown", "POST", th + "/runs/" + rid + "/cancel?action=bogus", "", nil, 422, "action: "},
		{"recursion_limit -1", "POST", th + "/runs", `{"assistant_id":"agent","config":{"recursion_limit":-1}}`, nil, 422, "config.recursion_limit: "},
		{"after_seconds 1e308", "POST", th + "/runs", `{"assistant_id":"agent","after_seconds":1e308}`, nil, 422, "after_seconds: "},
		{"sort_by with SQL", "POST", "/threads/search", `{"sort_by":"created_at; DROP TABLE x"}`, nil, 422, "sort_by: "},
		{"CORS preflight from origin null", "OPTIONS", "/threads", "", map[string]string{"Origin": "null", "Access-Control-Request-Method": "POST"}, 403, "origin null is not allowed"},
		{"CORS preflight from localhost.evil", "OPTIONS", "/threads", "", map[string]string{"Origin": "http://localhost.evil.example", "Access-Control-Request-Method": "POST"}, 403, "origin "},
		{"CORS preflight from 127.0.0.1.nip.io", "OPTIONS", "/threads", "", map[string]string{"Origin": "http://127.0.0.1.nip.io", "Access-Control-Request-Method": "POST"}, 403, "origin "},
		{"method override header", "GET", th, "", map[string]string{"X-HTTP-Method-Override": "DELETE"}, 200, ""},
	} {
		req, err := http.NewRequest(c.method, ts.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Detail string }
		if resp.StatusCode != c.code || c.detail != "" && (json.Unmarshal(b, &e) != nil || !strings.HasPrefix(e.Detail, c.detail)) {
			t.Errorf("%s: %d %.300s; want %d %q...", c.name, resp.StatusCode, b, c.code, c.detail)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("%s: CORS headers %v; want none", c.name, resp.Header)
		}
	}
	// The thread survived the method override, and duplicate keys take
	// the last value, as encoding/json decodes them (one reading, not a
	// first-key check and a last-key use).
	if code := do(t, "GET", ts.URL+th, nil, nil, nil); code != 200 {
		t.Errorf("thread after X-HTTP-Method-Override DELETE: %d; want 200", code)
	}
	const second = "0eeeeeee-46ac-7f1b-956c-95867187d56e"
	code, body := raw(t, "POST", ts.URL+"/threads", `{"thread_id":"`+tid+`","thread_id":"`+second+`"}`, nil)
	if code != 200 || !strings.Contains(body, second) {
		t.Errorf("duplicate thread_id keys: %d %s; want the thread of the last, %s", code, body, second)
	}
}
