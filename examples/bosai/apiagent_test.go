package bosai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/bosai"
)

// recordingAPI serves the demo API over HTTP and records every request's
// method, path, query and headers.
type recordingAPI struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
}

func newRecordingAPI(t *testing.T) *recordingAPI {
	api := &recordingAPI{}
	h := bosai.DemoAPI()
	api.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.mu.Lock()
		api.seen = append(api.seen, r.Clone(context.Background()))
		api.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(api.Close)
	return api
}

func (a *recordingAPI) requests() []*http.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*http.Request(nil), a.seen...)
}

func (a *recordingAPI) token(t *testing.T) string {
	t.Helper()
	tok, err := bosai.DemoTokenRefresher(a.Client())(t.Context(), a.URL, bosai.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func apiOnly(q string, ctx map[string]string) bosai.Request {
	return bosai.Request{Question: q, Context: ctx, Trace: true, Disable: []bosai.AgentName{bosai.AgentSQL, bosai.AgentComputation}}
}

// markerModel answers the first prompt with each marker by its scripted
// reply, and everything else as the offline model does.
type markerModel struct {
	hookModel
	mu      sync.Mutex
	replies map[string]string
}

func newMarkerModel(replies map[string]string) *markerModel {
	m := &markerModel{replies: replies}
	m.inner = bosai.NewOfflineModel()
	return m
}

func (m *markerModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	prompt := lastUser(req)
	m.mu.Lock()
	for marker, reply := range m.replies {
		if strings.HasPrefix(prompt, marker+"\n") {
			delete(m.replies, marker)
			m.mu.Unlock()
			return answer(reply), nil
		}
	}
	m.mu.Unlock()
	return m.hookModel.Generate(ctx, req)
}

func (m *markerModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return streamOf(ctx, req, m.Generate)
}

func traceHas(resp *bosai.Response, agent bosai.AgentName, msg string) bool {
	for _, e := range resp.Trace {
		if e.Agent == agent && strings.Contains(e.Message, msg) {
			return true
		}
	}
	return false
}

// TestAPIAgentSendsTokenAndHeaders: the bearer token and headers of the
// request context reach the API at the context's base URL.
func TestAPIAgentSendsTokenAndHeaders(t *testing.T) {
	api := newRecordingAPI(t)
	tok := api.token(t)
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: api.Client()})
	resp, err := bot.Ask(t.Context(), apiOnly("Is the service operational?", map[string]string{
		bosai.CtxAPIBaseURL: api.URL, bosai.CtxAPIBearerToken: tok, bosai.CtxAPIHeaders: `{"X-Tenant": "acme"}`}))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Results[0]
	if r.Agent != bosai.AgentAPI || r.Status != bosai.StatusSucceeded || !strings.Contains(r.Answer, "status degraded") {
		t.Fatalf("result %+v", r)
	}
	reqs := api.requests()
	last := reqs[len(reqs)-1]
	if last.URL.Path != "/v1/status" || last.Header.Get("Authorization") != "Bearer "+tok || last.Header.Get("X-Tenant") != "acme" {
		t.Fatalf("request %s %s, headers %v", last.Method, last.URL, last.Header)
	}
	if strings.Contains(fmt.Sprint(bot), tok) {
		t.Fatal("token leaked")
	}
}

// TestAPIAgentRefreshesToken: without a token the API answers 401; the
// refresh hook gets one and the call is made again.
func TestAPIAgentRefreshesToken(t *testing.T) {
	api := newRecordingAPI(t)
	refreshes := 0
	refresh := func(ctx context.Context, base string, req bosai.Request) (string, error) {
		refreshes++
		return bosai.DemoTokenRefresher(api.Client())(ctx, base, req)
	}
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: api.Client(), TokenRefresher: refresh})
	resp, err := bot.Ask(t.Context(), apiOnly("Any critical incidents?", map[string]string{bosai.CtxAPIBaseURL: api.URL, bosai.CtxAPIBearerToken: "stale"}))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Results[0]
	if r.Status != bosai.StatusSucceeded || refreshes != 1 || !traceHas(resp, bosai.AgentAPI, "401 Unauthorized: refreshing the token") {
		t.Fatalf("result %+v, %d refreshes", r, refreshes)
	}
	if !strings.Contains(r.Answer, "INC-190") || strings.Contains(r.Answer, "INC-204") {
		t.Fatalf("answer %q, want the critical incident only", r.Answer)
	}
	// Without a refresh hook the 401 fails the agent.
	bot = newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: api.Client()})
	resp, _ = bot.Ask(t.Context(), apiOnly("Any critical incidents?", map[string]string{bosai.CtxAPIBaseURL: api.URL}))
	if r := resp.Results[0]; r.Status != bosai.StatusFailed || !strings.Contains(r.Error.Message, "401") {
		t.Fatalf("no refresh hook: %+v", r)
	}
}

// TestAPIAgentDemoAuth: the bundled demo API wants a token too; the
// default refresher gets it.
func TestAPIAgentDemoAuth(t *testing.T) {
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{})
	resp, err := bot.Ask(t.Context(), apiOnly("Which regions are there, and what is their latency?", nil))
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Results[0]; r.Status != bosai.StatusSucceeded || !strings.Contains(r.Answer, "eu-west") || !traceHas(resp, bosai.AgentAPI, "refreshing the token") {
		t.Fatalf("result %+v", r)
	}
}

// TestAPIAgentAdjustsOn400: a plan the API rejects with 400 is adjusted
// once by the model, with the API's error in the prompt.
func TestAPIAgentAdjustsOn400(t *testing.T) {
	api := newRecordingAPI(t)
	m := newMarkerModel(map[string]string{
		bosai.MarkerAPI: `{"make_request": true, "method": "GET", "path": "/v1/incidents", "query_params": {"severity": "urgent"}, "reason": "scripted"}`,
	})
	bot := newBot(t, m, bosai.Config{HTTPClient: api.Client()})
	resp, err := bot.Ask(t.Context(), apiOnly("Which incidents are urgent?", map[string]string{bosai.CtxAPIBaseURL: api.URL, bosai.CtxAPIBearerToken: api.token(t)}))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Results[0]
	if r.Status != bosai.StatusSucceeded || !strings.Contains(r.Answer, "3 rows") {
		t.Fatalf("result %+v", r)
	}
	adjust := m.prompt(bosai.MarkerAPIAdjust)
	if !strings.Contains(adjust, `query parameter severity is \"urgent\"`) && !strings.Contains(adjust, `severity is "urgent"`) {
		t.Fatalf("the adjust prompt lacks the API's error:\n%s", adjust)
	}
	var paths []string
	for _, q := range api.requests() {
		if q.URL.Path == "/v1/incidents" {
			paths = append(paths, q.URL.RequestURI())
		}
	}
	if fmt.Sprint(paths) != "[/v1/incidents?severity=urgent /v1/incidents]" {
		t.Fatalf("requests %v", paths)
	}
}

// TestAPIAgentMutations: POST /v1/tickets is allowed by the docs and made;
// DELETE /v1/tickets/:id is not, and never reaches the API.
func TestAPIAgentMutations(t *testing.T) {
	api := newRecordingAPI(t)
	ctx := map[string]string{bosai.CtxAPIBaseURL: api.URL, bosai.CtxAPIBearerToken: api.token(t)}
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: api.Client()})
	resp, err := bot.Ask(t.Context(), apiOnly("Open a support ticket: dashboards are slow, severity major", ctx))
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Results[0]; r.Status != bosai.StatusSucceeded || !strings.Contains(r.Answer, "id T-1") {
		t.Fatalf("post: %+v", r)
	}
	m := newMarkerModel(map[string]string{
		bosai.MarkerAPI: `{"make_request": true, "method": "DELETE", "path": "/v1/tickets/:id", "path_params": {"id": "T-1"}, "reason": "scripted"}`,
	})
	bot = newBot(t, m, bosai.Config{HTTPClient: api.Client()})
	resp, err = bot.Ask(t.Context(), apiOnly("Delete ticket T-1", ctx))
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Results[0]; r.Status != bosai.StatusFailed || !strings.Contains(r.Error.Message, "does not allow it") {
		t.Fatalf("delete: %+v", r)
	}
	for _, q := range api.requests() {
		if q.Method == http.MethodDelete {
			t.Fatal("the DELETE reached the API")
		}
	}
}

// TestAPIBaseURLOrder: the context's base URL wins over the environment's,
// which wins over the default.
func TestAPIBaseURLOrder(t *testing.T) {
	ctxAPI, envAPI := newRecordingAPI(t), newRecordingAPI(t)
	t.Setenv(bosai.EnvAPIBaseURL, envAPI.URL)
	refresh := func(ctx context.Context, base string, req bosai.Request) (string, error) {
		return bosai.DemoTokenRefresher(http.DefaultClient)(ctx, base, req)
	}
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: http.DefaultClient, TokenRefresher: refresh})
	if _, err := bot.Ask(t.Context(), apiOnly("Is the service operational?", nil)); err != nil {
		t.Fatal(err)
	}
	if len(envAPI.requests()) == 0 || len(ctxAPI.requests()) != 0 {
		t.Fatalf("env: %d requests, context: %d", len(envAPI.requests()), len(ctxAPI.requests()))
	}
	if _, err := bot.Ask(t.Context(), apiOnly("Is the service operational?", map[string]string{bosai.CtxAPIBaseURL: ctxAPI.URL})); err != nil {
		t.Fatal(err)
	}
	if len(ctxAPI.requests()) == 0 {
		t.Fatal("the context's base URL was not used")
	}
}

func TestParseAPIDocs(t *testing.T) {
	d := bosai.DemoAPIDocs()
	if len(d.Endpoints) != 7 || d.BaseURL != bosai.DemoAPIBase {
		t.Fatalf("%+v", d)
	}
	for _, bad := range []string{"endpoints: []", "endpoints: [{method: GET, path: x}]", "endpoints: [{method: GET, path: /x, params: [{name: a, in: header}]}]"} {
		if _, err := bosai.ParseAPIDocs([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	var buf bytes.Buffer
	json.NewEncoder(&buf).Encode(d)
	if !strings.Contains(buf.String(), `"allowed":true`) {
		t.Fatal("the ticket endpoint is not allowed")
	}
}
