package bosai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
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
// request context reach the API at the configured base URL.
func TestAPIAgentSendsTokenAndHeaders(t *testing.T) {
	api := newRecordingAPI(t)
	tok := api.token(t)
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: api.Client(), APIBaseURL: api.URL})
	resp, err := bot.Ask(t.Context(), apiOnly("Is the service operational?", map[string]string{
		bosai.CtxAPIBearerToken: tok, bosai.CtxAPIHeaders: `{"X-Tenant": "acme"}`}))
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
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: api.Client(), APIBaseURL: api.URL, TokenRefresher: refresh})
	resp, err := bot.Ask(t.Context(), apiOnly("Any critical incidents?", map[string]string{bosai.CtxAPIBearerToken: "stale"}))
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
	bot = newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: api.Client(), APIBaseURL: api.URL})
	resp, _ = bot.Ask(t.Context(), apiOnly("Any critical incidents?", nil))
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
	bot := newBot(t, m, bosai.Config{HTTPClient: api.Client(), APIBaseURL: api.URL})
	resp, err := bot.Ask(t.Context(), apiOnly("Which incidents are urgent?", map[string]string{bosai.CtxAPIBearerToken: api.token(t)}))
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
	ctx := map[string]string{bosai.CtxAPIBearerToken: api.token(t)}
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: api.Client(), APIBaseURL: api.URL})
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
	bot = newBot(t, m, bosai.Config{HTTPClient: api.Client(), APIBaseURL: api.URL})
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

// TestAPIBaseURLOrder: the environment's base URL wins over Config's; a
// request's context may choose one of Config.AllowedAPIBases instead.
func TestAPIBaseURLOrder(t *testing.T) {
	ctxAPI, envAPI := newRecordingAPI(t), newRecordingAPI(t)
	t.Setenv(bosai.EnvAPIBaseURL, envAPI.URL)
	refresh := func(ctx context.Context, base string, req bosai.Request) (string, error) {
		return bosai.DemoTokenRefresher(http.DefaultClient)(ctx, base, req)
	}
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: http.DefaultClient, TokenRefresher: refresh,
		APIBaseURL: "http://config.invalid", AllowedAPIBases: []string{ctxAPI.URL}})
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
	for _, bad := range []string{"endpoints: []", "endpoints: [{method: GET, path: x}]", "endpoints: [{method: GET, path: /x, params: [{name: a, in: cookie}]}]", "endpoints: [{method: GET, path: /x, params: [{name: Cookie, in: header}]}]",
		"endpoints: [{method: GET, path: /x, params: [{name: True-Client-IP, in: header}]}]", "endpoints: [{method: GET, path: /x, params: [{name: x-original-host, in: header}]}]"} {
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

// TestAPIContextCannotChooseTheAPI: a request's context may not point the
// API agent at an address of its choosing (server-side request forgery):
// over HTTP the api_base_url of an internal server and any api_headers
// get 400 naming the key, and a Go caller's Ask fails with
// ErrInvalidRequest; the internal server is never called. A base listed
// in Config.AllowedAPIBases may be chosen, that base exactly.
func TestAPIContextCannotChooseTheAPI(t *testing.T) {
	var hits sync.Map
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.URL.String(), true)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status": "INTERNAL-ONLY"}`)
	}))
	defer internal.Close()
	called := func() bool {
		n := 0
		hits.Range(func(any, any) bool { n++; return true })
		return n > 0
	}
	ask := func(srv *httptest.Server, ctx map[string]string) (int, string) {
		body, _ := json.Marshal(map[string]any{"question": "Is the service operational?", "disable_agents": []string{"sql", "computation"}, "context": ctx})
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/ask", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	serve := func(cfg bosai.Config) (*bosai.Bot, *httptest.Server) {
		bot := newBot(t, bosai.NewOfflineModel(), cfg)
		h, err := bosai.Handler(bot, bosai.HTTPConfig{})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return bot, srv
	}

	bot, srv := serve(bosai.Config{})
	for _, c := range []struct {
		ctx  map[string]string
		want string
	}{
		{map[string]string{bosai.CtxAPIBaseURL: internal.URL}, "context api_base_url"},
		{map[string]string{bosai.CtxAPIBaseURL: internal.URL + "/admin/secrets?x="}, "Config.AllowedAPIBases"},
		{map[string]string{bosai.CtxAPIHeaders: `{"X-Injected": "yes"}`}, "context api_headers is not accepted from this caller"},
	} {
		if code, body := ask(srv, c.ctx); code != http.StatusBadRequest || !strings.Contains(body, c.want) || strings.Contains(body, "INTERNAL-ONLY") {
			t.Errorf("context %v: %d %s; want 400 saying %q", c.ctx, code, body, c.want)
		}
	}
	_, err := bot.Ask(t.Context(), apiOnly("Is the service operational?", map[string]string{bosai.CtxAPIBaseURL: internal.URL}))
	if !errors.Is(err, bosai.ErrInvalidRequest) || !strings.Contains(err.Error(), "Config.AllowedAPIBases") {
		t.Errorf("Go caller: %v; want ErrInvalidRequest naming Config.AllowedAPIBases", err)
	}
	// So does the agent when the graph runs without Run, as a LangGraph
	// server (examples/agentserver) runs it.
	st, err := bot.Graph().Thread("direct").Invoke(t.Context(), bosai.State{Request: apiOnly("Is the service operational?", map[string]string{bosai.CtxAPIBaseURL: internal.URL})})
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Results; len(r) != 1 || r[0].Status != bosai.StatusFailed || !strings.Contains(r[0].Error.Message, "Config.AllowedAPIBases") {
		t.Errorf("the graph without Run: %+v", r)
	}
	if called() {
		t.Fatal("the internal server was called")
	}

	// Listed, the base may be chosen; a path or query below it may not.
	_, srv = serve(bosai.Config{AllowedAPIBases: []string{internal.URL + "/"}})
	if code, body := ask(srv, map[string]string{bosai.CtxAPIBaseURL: internal.URL + "/admin?x="}); code != http.StatusBadRequest {
		t.Errorf("a path below an allowed base: %d %s; want 400", code, body)
	}
	if code, body := ask(srv, map[string]string{bosai.CtxAPIBaseURL: internal.URL}); code != http.StatusOK || !called() {
		t.Errorf("an allowed base: %d %s; want 200 and a call", code, body)
	}
	if _, ok := hits.Load("/v1/status"); !ok {
		t.Errorf("the allowed base got %v; want GET /v1/status", func() (s []any) { hits.Range(func(k, _ any) bool { s = append(s, k); return true }); return }())
	}

	if _, err := bosai.New(bosai.Config{Offline: true, AllowedAPIBases: []string{"ftp://x"}}); err == nil || !strings.Contains(err.Error(), "Config.AllowedAPIBases[0]") {
		t.Errorf("an invalid allowed base: %v", err)
	}
	if _, err := bosai.New(bosai.Config{Offline: true, APIBaseURL: "http://user:pw@api.example"}); err == nil || !strings.Contains(err.Error(), "Config.APIBaseURL") {
		t.Errorf("a base with credentials: %v", err)
	}
}

// TestAPIAgentRefreshesOnlyTheConfiguredBase: a 401 from a base the
// request chose (allowed) is not refreshed, so the client secret and the
// configured API's tokens stay with the configured API; a 401 from the
// configured base still is.
func TestAPIAgentRefreshesOnlyTheConfiguredBase(t *testing.T) {
	api := newRecordingAPI(t)
	var mu sync.Mutex
	var otherGot []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		otherGot = append(otherGot, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer other.Close()
	var bases []string
	refresh := func(ctx context.Context, base string, req bosai.Request) (string, error) {
		mu.Lock()
		bases = append(bases, base)
		mu.Unlock()
		return bosai.DemoTokenRefresher(api.Client())(ctx, base, req)
	}
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: api.Client(), APIBaseURL: api.URL, AllowedAPIBases: []string{other.URL}, TokenRefresher: refresh})
	resp, err := bot.Ask(t.Context(), apiOnly("Any critical incidents?", map[string]string{bosai.CtxAPIBaseURL: other.URL}))
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Results[0]; r.Status != bosai.StatusFailed || !strings.Contains(r.Error.Message, "401") {
		t.Fatalf("result %+v; want the 401", r)
	}
	mu.Lock()
	if len(bases) != 0 || len(otherGot) != 1 || strings.Contains(otherGot[0], bosai.DemoClientSecret) || strings.Contains(otherGot[0], "Bearer") {
		t.Fatalf("refreshes against %v; the other base got %q", bases, otherGot)
	}
	mu.Unlock()
	resp, err = bot.Ask(t.Context(), apiOnly("Any critical incidents?", nil))
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Results[0]; r.Status != bosai.StatusSucceeded || fmt.Sprint(bases) != "["+api.URL+"]" {
		t.Fatalf("configured base: %+v, refreshes against %v", r, bases)
	}
}

// TestAPIAgentRedirectsStayOnOrigin: the API's redirect to another origin
// is refused, so the token and the context's headers never reach it, and
// so is the token endpoint's (which would resend the client secret); a
// redirect on the API's own origin is followed.
func TestAPIAgentRedirectsStayOnOrigin(t *testing.T) {
	var mu sync.Mutex
	var elsewhereGot []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		elsewhereGot = append(elsewhereGot, r.Method+" "+r.URL.Path+" "+fmt.Sprint(r.Header)+" "+string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status": "elsewhere"}`)
	}))
	defer elsewhere.Close()
	demo := bosai.DemoAPI()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/status" && r.URL.Query().Get("moved") == "":
			http.Redirect(w, r, "/v1/status?moved=here", http.StatusFound) // same origin
		case r.URL.Path == "/v1/status" && r.URL.Query().Get("moved") == "here":
			http.Redirect(w, r, elsewhere.URL+"/v1/status", http.StatusTemporaryRedirect)
		case r.URL.Path == "/v1/regions" && r.URL.Query().Get("moved") == "":
			http.Redirect(w, r, "/v1/regions?moved=1", http.StatusMovedPermanently)
		case r.URL.Path == "/moved/v1/auth/token":
			http.Redirect(w, r, elsewhere.URL+"/v1/auth/token", http.StatusPermanentRedirect)
		default:
			demo.ServeHTTP(w, r)
		}
	}))
	defer api.Close()
	client := &http.Client{}
	tok, err := bosai.DemoTokenRefresher(client)(t.Context(), api.URL, bosai.Request{})
	if err != nil {
		t.Fatal(err)
	}
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: client, APIBaseURL: api.URL})
	ctx := map[string]string{bosai.CtxAPIBearerToken: tok, bosai.CtxAPIHeaders: `{"X-Api-Key": "tenant-key"}`}
	resp, err := bot.Ask(t.Context(), apiOnly("Is the service operational?", ctx))
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Results[0]; r.Status != bosai.StatusFailed || !strings.Contains(r.Error.Message, "redirected to another origin") {
		t.Fatalf("off-origin redirect: %+v", r)
	}
	resp, err = bot.Ask(t.Context(), apiOnly("Which regions are there, and what is their latency?", ctx))
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Results[0]; r.Status != bosai.StatusSucceeded || !strings.Contains(r.Answer, "eu-west") {
		t.Fatalf("same-origin redirect: %+v", r)
	}
	if _, err := bosai.DemoTokenRefresher(client)(t.Context(), api.URL+"/moved", bosai.Request{}); err == nil || !strings.Contains(err.Error(), "redirected to another origin") {
		t.Fatalf("the token endpoint's off-origin redirect: %v", err)
	}
	if client.CheckRedirect != nil {
		t.Fatal("the Config's client was changed")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(elsewhereGot) != 0 {
		t.Fatalf("another origin got %q", elsewhereGot)
	}
}

// TestAPIAgentRefusesDotPathParams: a path parameter "." or ".." would
// make /v1/incidents/:id reach another path; the plan is refused, naming
// the parameter, and nothing reaches the API.
func TestAPIAgentRefusesDotPathParams(t *testing.T) {
	api := newRecordingAPI(t)
	tok := api.token(t)
	for _, id := range []string{"..", "."} {
		m := newMarkerModel(map[string]string{
			bosai.MarkerAPI: `{"make_request": true, "method": "GET", "path": "/v1/incidents/:id", "path_params": {"id": "` + id + `"}, "reason": "scripted"}`,
		})
		bot := newBot(t, m, bosai.Config{HTTPClient: api.Client(), APIBaseURL: api.URL})
		resp, err := bot.Ask(t.Context(), apiOnly("Show incident INC-204", map[string]string{bosai.CtxAPIBearerToken: tok}))
		if err != nil {
			t.Fatal(err)
		}
		if r := resp.Results[0]; r.Status != bosai.StatusFailed || !strings.Contains(r.Error.Message, fmt.Sprintf("path parameter id is %q", id)) {
			t.Errorf("id %q: %+v", id, r)
		}
	}
	for _, q := range api.requests() {
		if q.URL.Path != "/v1/auth/token" {
			t.Errorf("%s %s reached the API", q.Method, q.URL)
		}
	}
}

// docsWith returns the demo docs with extra params on GET /v1/status.
func docsWith(extra ...bosai.Param) *bosai.APIDocs {
	d := bosai.DemoAPIDocs()
	for i, e := range d.Endpoints {
		if e.Method == http.MethodGet && e.Path == "/v1/status" {
			d.Endpoints[i].Params = append(slices.Clone(e.Params), extra...)
		}
	}
	return d
}

// askScripted runs one API-only question on a Bot whose model answers the
// planning prompt with plan, against api with a valid token plus ctx.
func askScripted(t *testing.T, api *recordingAPI, cfg bosai.Config, plan string, ctx map[string]string) *bosai.Response {
	t.Helper()
	c := map[string]string{bosai.CtxAPIBearerToken: api.token(t)}
	maps.Copy(c, ctx)
	cfg.HTTPClient, cfg.APIBaseURL = api.Client(), api.URL
	bot := newBot(t, newMarkerModel(map[string]string{bosai.MarkerAPI: plan}), cfg)
	resp, err := bot.Ask(t.Context(), apiOnly("Is the service operational?", c))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestAPIAgentPlanHeaders: a plan may set only the headers the docs
// declare for its endpoint; an undeclared one fails the plan before any
// call, naming it, as does a missing required one (matched whatever its
// case); the program's api_headers win over the plan's; the trace
// names the headers sent, not their values.
func TestAPIAgentPlanHeaders(t *testing.T) {
	docs := docsWith(bosai.Param{Name: "X-Trace-Id", In: "header", Required: true})
	api := newRecordingAPI(t)
	resp := askScripted(t, api, bosai.Config{APIDocs: docs},
		`{"make_request": true, "method": "GET", "path": "/v1/status", "headers": {"X-Trace-Id": "m", "X-Forwarded-Host": "evil.example"}, "reason": "scripted"}`, nil)
	if r := resp.Results[0]; r.Status != bosai.StatusFailed || !strings.Contains(r.Error.Message, "headers.X-Forwarded-Host is not a header parameter") {
		t.Fatalf("undeclared header: %+v", r)
	}
	for _, q := range api.requests() {
		if q.URL.Path != "/v1/auth/token" {
			t.Fatalf("%s %s reached the API", q.Method, q.URL)
		}
	}
	resp = askScripted(t, api, bosai.Config{APIDocs: docs},
		`{"make_request": true, "method": "GET", "path": "/v1/status", "headers": {"x-trace-id": "from-model", "X-Tenant": "x"}, "reason": "scripted"}`, nil)
	if r := resp.Results[0]; r.Status != bosai.StatusFailed || !strings.Contains(r.Error.Message, "headers.X-Tenant") {
		t.Fatalf("undeclared header: %+v", r)
	}
	resp = askScripted(t, api, bosai.Config{APIDocs: docs}, `{"make_request": true, "method": "GET", "path": "/v1/status", "reason": "scripted"}`, nil)
	if r := resp.Results[0]; r.Status != bosai.StatusFailed || !strings.Contains(r.Error.Message, "the header parameter X-Trace-Id is required") {
		t.Fatalf("required header missing: %+v", r)
	}
	resp = askScripted(t, api, bosai.Config{APIDocs: docs},
		`{"make_request": true, "method": "GET", "path": "/v1/status", "headers": {"x-trace-id": "from-model"}, "reason": "scripted"}`,
		map[string]string{bosai.CtxAPIHeaders: `{"X-Trace-Id": "from-program"}`})
	if r := resp.Results[0]; r.Status != bosai.StatusSucceeded {
		t.Fatalf("declared header: %+v", r)
	}
	reqs := api.requests()
	if got := reqs[len(reqs)-1].Header.Values("X-Trace-Id"); !slices.Equal(got, []string{"from-program"}) {
		t.Fatalf("X-Trace-Id sent %q, want the program's", got)
	}
	var names any
	for _, e := range resp.Trace {
		if e.Message == "executed HTTP request" {
			names = e.Data["headers"]
		}
	}
	if fmt.Sprint(names) != "[X-Trace-Id]" {
		t.Fatalf("trace headers %v", names)
	}
	raw, _ := json.Marshal(resp.Trace)
	if strings.Contains(string(raw), "from-program") {
		t.Fatal("the trace holds a header's value")
	}
}

// TestAPIAgentRefusesUndeclaredParams: query and body keys the endpoint
// does not declare, and a body on GET, fail the plan with an error naming
// the key and the endpoint's parameters; nothing reaches the API.
func TestAPIAgentRefusesUndeclaredParams(t *testing.T) {
	api := newRecordingAPI(t)
	for plan, want := range map[string]string{
		`{"make_request": true, "method": "GET", "path": "/v1/incidents", "query_params": {"severity": "critical", "admin": "1"}, "reason": "s"}`: "query_params.admin is not a query parameter of the endpoint; remove it or use one the endpoint lists (severity, state)",
		`{"make_request": true, "method": "POST", "path": "/v1/tickets", "json_body": {"title": "t", "owner": "root"}, "reason": "s"}`:            "json_body.owner is not a body parameter",
		`{"make_request": true, "method": "GET", "path": "/v1/status", "json_body": {"x": 1}, "reason": "s"}`:                                     "a GET request carries no body",
	} {
		resp := askScripted(t, api, bosai.Config{}, plan, nil)
		if r := resp.Results[0]; r.Status != bosai.StatusFailed || !strings.Contains(r.Error.Message, want) {
			t.Errorf("%s: %+v", plan, r)
		}
	}
	for _, q := range api.requests() {
		if q.URL.Path != "/v1/auth/token" {
			t.Errorf("%s %s reached the API", q.Method, q.URL)
		}
	}
}

// TestAPIAgentNumbersInPlainDecimal: a JSON number in a path or query
// parameter is sent as 1000000, not 1e+06.
func TestAPIAgentNumbersInPlainDecimal(t *testing.T) {
	api := newRecordingAPI(t)
	askScripted(t, api, bosai.Config{}, `{"make_request": true, "method": "GET", "path": "/v1/incidents/:id", "path_params": {"id": 1000000}, "reason": "s"}`, nil)
	askScripted(t, api, bosai.Config{}, `{"make_request": true, "method": "GET", "path": "/v1/incidents", "query_params": {"severity": 2500000.5}, "reason": "s"}`, nil)
	var got []string
	for _, q := range api.requests() {
		if q.URL.Path != "/v1/auth/token" {
			got = append(got, q.URL.RequestURI())
		}
	}
	if want := []string{"/v1/incidents/1000000", "/v1/incidents?severity=2500000.5"}; !slices.Contains(got, want[0]) || !slices.Contains(got, want[1]) {
		t.Fatalf("requests %q, want %q", got, want)
	}
}

// TestNewChecksAPIDocs: Go-built docs are checked as parsed ones are: a
// path without a leading / (whose parameter could name the host), a
// parameter inside a segment, a body on GET and a routing header are
// refused, naming the endpoint.
func TestNewChecksAPIDocs(t *testing.T) {
	for _, c := range []struct {
		e    bosai.Endpoint
		want string
	}{
		{bosai.Endpoint{Method: "GET", Path: ":host/v1"}, "a path starting with /"},
		{bosai.Endpoint{Method: "GET", Path: "/v1/reports/:date.csv"}, `segment ":date.csv"`},
		{bosai.Endpoint{Method: "GET", Path: "/v1/x", Params: []bosai.Param{{Name: "q", In: "body"}}}, "a GET request carries no body"},
		{bosai.Endpoint{Method: "GET", Path: "/v1/x", Params: []bosai.Param{{Name: "x-forwarded-for", In: "header"}}}, "may not be set by a plan"},
		{bosai.Endpoint{Method: "GET", Path: "/v1/x", Params: []bosai.Param{{Name: "Host", In: "header"}}}, "may not be set by a plan"},
	} {
		_, err := bosai.New(bosai.Config{Model: bosai.NewOfflineModel(), APIDocs: &bosai.APIDocs{Endpoints: []bosai.Endpoint{c.e}}})
		if err == nil || !strings.Contains(err.Error(), "Config.APIDocs") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v", c.e.Method, c.e.Path, err)
		}
	}
	if _, err := bosai.ParseAPIDocs([]byte("endpoints: [{method: GET, path: /v1/reports/:date.csv}]")); err == nil || !strings.Contains(err.Error(), "whole segment") {
		t.Errorf("ParseAPIDocs: %v", err)
	}
}

// TestAPIAgentRedirectsStayUnderTheBase: two bases on one origin stay
// apart: a redirect from /tenant-a/... to /tenant-b/... is refused, and
// tenant b never sees tenant a's token.
func TestAPIAgentRedirectsStayUnderTheBase(t *testing.T) {
	var mu sync.Mutex
	var bGot []string
	demo := bosai.DemoAPI()
	mux := http.NewServeMux()
	mux.Handle("/tenant-a/", http.StripPrefix("/tenant-a", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/status" {
			http.Redirect(w, r, "/tenant-b/v1/status", http.StatusTemporaryRedirect)
			return
		}
		demo.ServeHTTP(w, r)
	})))
	mux.HandleFunc("/tenant-b/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		bGot = append(bGot, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		fmt.Fprint(w, `{"status": "tenant b"}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	base := srv.URL + "/tenant-a"
	tok, err := bosai.DemoTokenRefresher(srv.Client())(t.Context(), base, bosai.Request{})
	if err != nil {
		t.Fatal(err)
	}
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{HTTPClient: srv.Client(), APIBaseURL: base})
	resp, err := bot.Ask(t.Context(), apiOnly("Is the service operational?", map[string]string{bosai.CtxAPIBearerToken: tok}))
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Results[0]; r.Status != bosai.StatusFailed || !strings.Contains(r.Error.Message, "out of its base URL's path") {
		t.Fatalf("redirect out of the base: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bGot) != 0 {
		t.Fatalf("tenant b got %q", bGot)
	}
}

// TestDemoRefresherOnlyForTheDemo: with no HTTPClient but a real API's
// base, a 401 is not answered by posting the demo's credentials there.
func TestDemoRefresherOnlyForTheDemo(t *testing.T) {
	api := newRecordingAPI(t)
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{APIBaseURL: api.URL})
	resp, err := bot.Ask(t.Context(), apiOnly("Is the service operational?", nil))
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Results[0]; r.Status != bosai.StatusFailed || !strings.Contains(r.Error.Message, "401") {
		t.Fatalf("%+v", r)
	}
	for _, q := range api.requests() {
		if q.URL.Path == "/v1/auth/token" {
			t.Fatalf("the demo's credentials were posted to %s", api.URL)
		}
	}
}

// TestSecretsStayOutOfPromptsAndState: the bearer token, the program's
// headers and the base URL reach the API but no prompt, and the token and
// headers are not in the run's saved state.
func TestSecretsStayOutOfPromptsAndState(t *testing.T) {
	api := newRecordingAPI(t)
	tok := api.token(t)
	m := &hookModel{inner: bosai.NewOfflineModel()}
	bot := newBot(t, m, bosai.Config{HTTPClient: api.Client(), APIBaseURL: api.URL, AllowedAPIBases: []string{api.URL + "/"}})
	req := bosai.Request{Question: "Is the service operational? And how many customers are there?", Trace: true,
		Context: map[string]string{bosai.CtxAPIBearerToken: tok, bosai.CtxAPIHeaders: `{"X-Api-Key": "program-key"}`, bosai.CtxAPIBaseURL: api.URL + "/", "tenant": "acme"}}
	resp, err := bot.Ask(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	reqs := api.requests()
	if last := reqs[len(reqs)-1]; last.Header.Get("Authorization") != "Bearer "+tok || last.Header.Get("X-Api-Key") != "program-key" {
		t.Fatalf("the API got %v", last.Header)
	}
	m.mu.Lock()
	prompts := slices.Clone(m.prompts)
	m.mu.Unlock()
	if len(prompts) < 3 {
		t.Fatalf("%d prompts", len(prompts))
	}
	for _, p := range prompts {
		for _, secret := range []string{tok, "program-key", bosai.CtxAPIBaseURL, bosai.CtxAPIHeaders} {
			if strings.Contains(p, secret) {
				t.Errorf("a prompt holds %q:\n%s", secret, p)
			}
		}
	}
	if !slices.ContainsFunc(prompts, func(p string) bool { return strings.Contains(p, "- tenant: acme") }) {
		t.Error("the context's other keys reach no prompt")
	}
	st, err := bot.State(t.Context(), resp.Thread)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(st)
	for _, secret := range []string{tok, "program-key"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the saved state holds %q", secret)
		}
	}
	if st.Request.Context["tenant"] != "acme" {
		t.Errorf("saved context %v", st.Request.Context)
	}
	if _, ok := req.Context[bosai.CtxAPIBearerToken]; !ok {
		t.Error("Ask changed the caller's context")
	}
}
