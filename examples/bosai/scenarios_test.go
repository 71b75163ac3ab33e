package bosai_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/examples/bosai"
)

// TestSeedScenarios runs the seed's three data-flow scenarios offline:
// each gets the seed's agent sequence, the answer the results support, and
// the trace in testdata/scenarios.golden (go test -run TestSeedScenarios
// -args -update rewrites it).
func TestSeedScenarios(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	cases := []struct {
		question string
		agents   []bosai.AgentName
		statuses []bosai.Status
		answer   []string
	}{
		{"List all tables in the database", []bosai.AgentName{bosai.AgentSQL},
			[]bosai.Status{bosai.StatusSucceeded}, []string{"customers", "order_items", "orders", "products"}},
		{"List me all the API points available to you", []bosai.AgentName{bosai.AgentAPI, bosai.AgentSQL},
			[]bosai.Status{bosai.StatusSucceeded, bosai.StatusSucceeded}, []string{"/v1/incidents", "/v1/tickets", "customers"}},
		{"Query database and call API", []bosai.AgentName{bosai.AgentSQL, bosai.AgentAPI},
			[]bosai.Status{bosai.StatusSucceeded, bosai.StatusFailed}, []string{"From sql:", "api_docs agent failed", "partial"}},
	}
	var golden strings.Builder
	for _, c := range cases {
		resp, err := bot.Ask(t.Context(), bosai.Request{Question: c.question, Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.agents, resp.Plan.Agents); diff != "" {
			t.Errorf("%s: agents (-seed +got):\n%s", c.question, diff)
		}
		for i, r := range resp.Results {
			if i < len(c.statuses) && r.Status != c.statuses[i] {
				t.Errorf("%s: %s %s, want %s (%v)", c.question, r.Agent, r.Status, c.statuses[i], r.Error)
			}
		}
		for _, w := range c.answer {
			if !strings.Contains(resp.Answer, w) {
				t.Errorf("%s: answer lacks %q: %s", c.question, w, resp.Answer)
			}
		}
		fmt.Fprintf(&golden, "# %s\n", c.question)
		for _, e := range resp.Trace {
			fmt.Fprintf(&golden, "%-8s %-11s %s\n", e.Kind, e.Agent, e.Message)
		}
	}
	path := filepath.Join("testdata", "scenarios.golden")
	if *update {
		if err := os.WriteFile(path, []byte(golden.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), golden.String()); diff != "" {
		t.Errorf("traces (-golden +got):\n%s", diff)
	}
}

// TestRequestValidation: unknown agents, negative max_turns and an empty
// question are refused, naming the valid agents.
func TestRequestValidation(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	_, err := bot.Ask(t.Context(), bosai.Request{Question: "x", Prefer: []bosai.AgentName{"knowledge"}})
	if err == nil || !strings.Contains(err.Error(), `"knowledge" is not an agent; the agents are api_docs, sql, computation`) {
		t.Fatalf("unknown agent: %v", err)
	}
	if _, err := bot.Ask(t.Context(), bosai.Request{Question: "x", MaxTurns: -1}); err == nil || !strings.Contains(err.Error(), "max_turns") {
		t.Fatalf("max_turns: %v", err)
	}
	// Names are normalised: " SQL " is sql.
	resp, err := bot.Ask(t.Context(), bosai.Request{Question: "How many customers are there?", Disable: []bosai.AgentName{" API_DOCS ", "Computation"}})
	if err != nil || len(resp.Results) != 1 || resp.Results[0].Agent != bosai.AgentSQL {
		t.Fatalf("%v %+v", err, resp)
	}
}

// TestMaxTurnsIncludeDataTrace: agents beyond max_turns are skipped;
// include_data false drops the tables; the trace is in the response only
// when asked for; latency is in milliseconds.
func TestMaxTurnsIncludeDataTrace(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	no := false
	resp, err := bot.Ask(t.Context(), bosai.Request{Question: twoAgents, MaxTurns: 1, IncludeData: &no})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 2 || resp.Results[0].Status != bosai.StatusSucceeded || resp.Results[1].Status != bosai.StatusSkipped || resp.Results[1].Agent != bosai.AgentComputation {
		t.Fatalf("results %+v", resp.Results)
	}
	if resp.Data != nil || resp.Results[0].Table != nil || resp.Trace != nil {
		t.Fatalf("data %v, table %v, trace %d events; want none", resp.Data, resp.Results[0].Table, len(resp.Trace))
	}
	raw, _ := json.Marshal(resp.Results[0])
	if !strings.Contains(string(raw), `"latency_ms":`) || resp.Results[0].LatencyMS <= 0 {
		t.Fatalf("latency: %s", raw)
	}
}

// TestHTTPAPI: POST /v1/ask answers JSON, streams SSE when asked, and
// refuses invalid requests with 400 naming the field and a body over
// MaxRequestBytes with 413.
func TestHTTPAPI(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	h, err := bosai.Handler(bot, bosai.HTTPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(body, accept string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/ask", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	r := post(`{"question": "How many customers are there?", "disable_agents": ["computation"]}`, "")
	var out bosai.Response
	if r.StatusCode != 200 || json.NewDecoder(r.Body).Decode(&out) != nil || out.Data == nil || out.Data.RowCount != 1 {
		t.Fatalf("JSON: %d %+v", r.StatusCode, out)
	}
	for body, want := range map[string]string{
		`{"question": ""}`: "question is empty",
		`{"question": "x", "prefer_agents": ["nope"]}`:                                                  "the agents are api_docs, sql, computation",
		`{"question": "x", "colour": "red"}`:                                                            "unknown field",
		`{"question": "x", "thread": "t1"}`:                                                             `unknown field "thread"`,
		`{"question": "` + strings.Repeat("a", bosai.MaxQuestionLen+1) + `"}`:                           "question is 8193 bytes; the limit is 8192 (MaxQuestionLen)",
		`{"question": "x", "system_prompt": "` + strings.Repeat("a", bosai.MaxSystemPromptLen+1) + `"}`: "system_prompt is 32769 bytes; the limit is 32768 (MaxSystemPromptLen)",
		`{"question": "x", "context": {"k": "` + strings.Repeat("a", bosai.MaxContextLen) + `"}}`:       "context is 16385 bytes (keys and values); the limit is 16384 (MaxContextLen)",
		`{"question": "x", "prefer_agents": ["sql", "SQL "]}`:                                           `prefer_agents names "sql" twice`,
		`{"question": "x", "disable_agents": ["` + strings.Repeat("z", 1000) + `", "nope"]}`:            "is not an agent",
	} {
		r := post(body, "")
		var e map[string]string
		json.NewDecoder(r.Body).Decode(&e)
		if r.StatusCode != 400 || !strings.Contains(e["error"], want) {
			t.Errorf("%s: %d %v, want 400 saying %q", body, r.StatusCode, e, want)
		}
	}
	// A body over MaxRequestBytes is too large (413), not a bad request.
	r = post(`{"question": "x", "system_prompt": "`+strings.Repeat("a", bosai.MaxRequestBytes)+`"}`, "")
	if b, _ := io.ReadAll(r.Body); r.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "MaxRequestBytes") {
		t.Errorf("body over MaxRequestBytes: %d %s, want 413 naming MaxRequestBytes", r.StatusCode, b)
	}
	r = post(`{"question": "How many customers are there?"}`, "text/event-stream")
	var events []string
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, ev)
		}
	}
	if len(events) < 3 || events[0] != "trace" || events[len(events)-1] != "response" {
		t.Fatalf("SSE events %v", events)
	}
}

// TestHTTPGuard replays attacks on the HTTP API: without tokens, a page
// whose name was rebound to 127.0.0.1 (421), a page of another origin and
// a cross-site form posting text/plain (403, 415); with tokens, a request
// without one (401). Each is refused before a question reaches the bot.
func TestHTTPGuard(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	const token = "alice-token-0123456789"
	serve := func(cfg bosai.HTTPConfig) *httptest.Server {
		h, err := bosai.Handler(bot, cfg)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv
	}
	open, authed := serve(bosai.HTTPConfig{}), serve(bosai.HTTPConfig{Tokens: map[string]string{token: "alice"}})
	ask := func(srv *httptest.Server, headers ...string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/ask", strings.NewReader(`{"question": "How many customers are there?"}`))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			if headers[i] == "Host" {
				req.Host = headers[i+1]
				continue
			}
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		name    string
		srv     *httptest.Server
		headers []string
		want    int
		says    string
	}{
		{"rebound host", open, []string{"Host", "attacker.example"}, http.StatusMisdirectedRequest, "HTTPConfig.Tokens"},
		{"foreign origin", open, []string{"Origin", "https://evil.example"}, http.StatusForbidden, "HTTPConfig.AllowedOrigins"},
		{"text/plain form", open, []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType, "application/json"},
		{"no token", authed, nil, http.StatusUnauthorized, "Authorization: Bearer"},
		{"wrong token", authed, []string{"Authorization", "Bearer bob-token-0123456789ab"}, http.StatusUnauthorized, "Authorization: Bearer"},
		{"loopback", open, nil, http.StatusOK, `"answer"`},
		{"token, any host", authed, []string{"Authorization", "Bearer " + token, "Host", "bosai.example"}, http.StatusOK, `"answer"`},
	} {
		if code, body := ask(c.srv, c.headers...); code != c.want || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %s, want %d saying %s", c.name, code, body, c.want, c.says)
		}
	}
	if _, err := bosai.Handler(bot, bosai.HTTPConfig{Tokens: map[string]string{"short": "alice"}}); err == nil || !strings.Contains(err.Error(), "HTTPConfig.Tokens") {
		t.Errorf("a short token: %v, want an error naming HTTPConfig.Tokens", err)
	}
}
