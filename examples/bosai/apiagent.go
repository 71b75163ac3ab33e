package bosai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/resilience"
)

// The request context keys the API agent reads (the seed's).
const (
	// CtxAPIBaseURL chooses the API's base URL for one request among the
	// configured ones: the configured base (EnvAPIBaseURL, else
	// Config.APIBaseURL, else the docs' base_url) or one of
	// Config.AllowedAPIBases. Any other value fails the request with
	// ErrInvalidRequest, for Go callers and HTTP callers alike, so that a
	// request cannot make the Bot fetch an address of its choosing.
	CtxAPIBaseURL = "api_base_url"
	// CtxAPIBearerToken is a bearer token to send.
	CtxAPIBearerToken = "api_bearer_token"
	// CtxAPIHeaders is a JSON object of extra headers, such as
	// {"X-Tenant": "acme"}. Go callers may set it; Handler refuses it
	// (400), since headers sent with the Bot's credentials are the
	// program's to choose, not an HTTP caller's.
	CtxAPIHeaders = "api_headers"
)

// EnvAPIBaseURL is the environment variable of the API's base URL, read by
// New; it wins over Config.APIBaseURL.
const EnvAPIBaseURL = "BOSAI_API_BASE_URL"

// The markers of the API agent's model calls.
const (
	MarkerAPIAdjust  = "# Task: bosai api adjust"
	MarkerAPISummary = "# Task: bosai api summary"
)

// TokenRefresher obtains a new bearer token after the API answered 401,
// for the request req. It is the seed's token refresh. baseURL is always
// the configured base (see CtxAPIBaseURL): a 401 from a base the request
// chose among Config.AllowedAPIBases is not refreshed, so that the
// configured API's credentials and tokens go nowhere else.
type TokenRefresher func(ctx context.Context, baseURL string, req Request) (string, error)

// DemoTokenRefresher asks the demo API's POST /v1/auth/token for a token
// with DemoClientID and DemoClientSecret, sent with client (nil means
// http.DefaultClient) whose redirects it follows on baseURL's origin only.
func DemoTokenRefresher(client *http.Client) TokenRefresher {
	client = sameOriginClient(client)
	return func(ctx context.Context, baseURL string, req Request) (string, error) {
		body, _ := json.Marshal(map[string]string{"client_id": DemoClientID, "client_secret": DemoClientSecret})
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(baseURL, "/")+"/v1/auth/token", bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		r.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(r)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var t struct {
			AccessToken string `json:"access_token"`
		}
		if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&t) != nil || t.AccessToken == "" {
			return "", fmt.Errorf("token endpoint answered %s", resp.Status)
		}
		return t.AccessToken, nil
	}
}

// apiCallPlan is the API agent's model-written plan (the seed's
// ApiCallPlan).
type apiCallPlan struct {
	MakeRequest   bool              `json:"make_request"`
	Method        string            `json:"method,omitempty"`
	Path          string            `json:"path,omitempty"`
	PathParams    map[string]any    `json:"path_params,omitempty"`
	QueryParams   map[string]any    `json:"query_params,omitempty"`
	JSONBody      map[string]any    `json:"json_body,omitempty"`
	Headers       map[string]string `json:"headers,omitempty"`
	Reason        string            `json:"reason"`
	FailureReason string            `json:"failure_reason,omitempty"`
}

func (b *Bot) endpointOf(p apiCallPlan) (Endpoint, bool) {
	for _, e := range b.docs.Endpoints {
		if e.Method == strings.ToUpper(p.Method) && e.Path == p.Path {
			return e, true
		}
	}
	return Endpoint{}, false
}

func writeEndpoint(b *strings.Builder, e Endpoint) {
	fmt.Fprintf(b, "- %s %s: %s", e.Method, e.Path, e.Summary)
	if e.Mutating() {
		if e.Allowed {
			b.WriteString(" [mutating, allowed]")
		} else {
			b.WriteString(" [mutating, NOT allowed]")
		}
	}
	b.WriteString("\n")
	for _, p := range e.Params {
		fmt.Fprintf(b, "  - param %s in %s", p.Name, p.In)
		if p.Required {
			b.WriteString(" required")
		}
		if len(p.Enum) > 0 {
			b.WriteString(" one of " + strings.Join(p.Enum, "|"))
		}
		if p.Description != "" {
			b.WriteString(": " + p.Description)
		}
		b.WriteString("\n")
	}
}

func (b *Bot) apiPrompt(req Request) string {
	var s strings.Builder
	s.WriteString(MarkerAPI + "\n\nPlan one HTTP call to " + cmp.Or(b.docs.Name, "the API") + " that answers the question, choosing from the candidate endpoints below (best match first). Fill path_params, query_params and json_body from the question. Mutating endpoints marked NOT allowed must not be called. If none fits, set make_request to false and say why in failure_reason.\n\n")
	s.WriteString("## Question\n" + req.Question + "\n\n## Endpoints\n")
	for _, e := range rankEndpoints(b.docs, req.Question, b.topK) {
		writeEndpoint(&s, e)
	}
	ctx := map[string]string{}
	for k, v := range req.Context {
		if k != CtxAPIBearerToken { // secrets stay out of prompts
			ctx[k] = v
		}
	}
	writeContext(&s, ctx)
	return s.String()
}

// validatePlan checks a plan against the catalogue.
func (b *Bot) validatePlan(p apiCallPlan) (Endpoint, error) {
	e, ok := b.endpointOf(p)
	if !ok {
		return e, fmt.Errorf("%s %s is not in the API documentation", p.Method, p.Path)
	}
	if e.Mutating() && !e.Allowed {
		return e, fmt.Errorf("%s %s changes data and the API documentation does not allow it; the agent calls it only when the endpoint says allowed: true", e.Method, e.Path)
	}
	if _, err := renderPath(e.Path, p.PathParams); err != nil {
		return e, fmt.Errorf("%s %s: %w", e.Method, e.Path, err)
	}
	for _, prm := range e.Params {
		if prm.Required {
			var v any
			switch prm.In {
			case "path":
				v = p.PathParams[prm.Name]
			case "query":
				v = p.QueryParams[prm.Name]
			case "body":
				v = p.JSONBody[prm.Name]
			}
			if v == nil || v == "" {
				return e, fmt.Errorf("%s %s: the %s parameter %s is required", e.Method, e.Path, prm.In, prm.Name)
			}
		}
	}
	return e, nil
}

// configuredAPIBase resolves the API's base URL at New: the environment,
// Config, the docs, the demo; the error names the source that is invalid.
func configuredAPIBase(cfg Config, docs *APIDocs) (string, error) {
	src, raw := "environment variable "+EnvAPIBaseURL, os.Getenv(EnvAPIBaseURL)
	switch {
	case raw != "":
	case cfg.APIBaseURL != "":
		src, raw = "Config.APIBaseURL", cfg.APIBaseURL
	case docs.BaseURL != "":
		src, raw = "Config.APIDocs base_url", docs.BaseURL
	default:
		return DemoAPIBase, nil
	}
	base, err := normalizeAPIBase(raw)
	if err != nil {
		return "", fmt.Errorf("bosai: %s: %w", src, err)
	}
	return base, nil
}

// normalizeAPIBase checks that s is an absolute http or https URL without
// credentials, query or fragment, and returns it without a trailing slash.
func normalizeAPIBase(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute http or https URL; give one such as https://api.example.com", s)
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("%q has credentials, a query or a fragment; give the base URL alone (credentials go in the token or the HTTP client)", s)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// checkAPIContext refuses a request whose context chooses an API base URL
// that is not configured.
func (b *Bot) checkAPIContext(req Request) error {
	raw, ok := req.Context[CtxAPIBaseURL]
	if !ok {
		return nil
	}
	if base, err := normalizeAPIBase(raw); err == nil && (base == b.apiBase || b.allowedBases[base]) {
		return nil
	}
	return fmt.Errorf("%w: context %s %q is not an API base URL this Bot may call: it calls its configured base; "+
		"to let requests choose another, list it in Config.AllowedAPIBases", ErrInvalidRequest, CtxAPIBaseURL, raw)
}

// baseURL is the API's base URL for req, checked by checkAPIContext: the
// context's choice, else the configured base.
func (b *Bot) baseURL(req Request) string {
	if base, err := normalizeAPIBase(req.Context[CtxAPIBaseURL]); err == nil {
		return base
	}
	return b.apiBase
}

// errOffOrigin marks a redirect the API agent refused to follow.
var errOffOrigin = errors.New("bosai: the API redirected to another origin; the agent follows redirects on the API's own scheme, host and port only")

// sameOriginClient returns a copy of c (http.DefaultClient when nil) that
// follows a redirect only to the origin (scheme, host and port) of the
// request that met it, so that the headers and bodies of the API's calls,
// credentials included, never leave the API. c's own CheckRedirect, if
// any, is asked next; else at most 10 redirects are followed, as by
// default.
func sameOriginClient(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	cc := *c
	next := c.CheckRedirect
	cc.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if from, to := origin(via[0].URL), origin(r.URL); from != to {
			return fmt.Errorf("%w (%s to %s)", errOffOrigin, from, to)
		}
		if next != nil {
			return next(r, via)
		}
		if len(via) >= 10 {
			return errors.New("bosai: the API redirected 10 times; stopped")
		}
		return nil
	}
	return &cc
}

// origin is u's scheme, host and port, with the scheme's default port
// when u names none.
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// renderPath puts the plan's path parameters into an endpoint's path: each
// segment ":name" becomes the parameter name's value, escaped. A value
// that is empty, "." or ".." is refused, since it would make the call
// reach another path than the endpoint's.
func renderPath(path string, params map[string]any) (string, error) {
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		name, ok := strings.CutPrefix(seg, ":")
		if !ok || name == "" {
			continue
		}
		v, ok := params[name]
		if !ok || v == nil {
			return "", fmt.Errorf("the plan gives no path parameter %s; set path_params.%s", name, name)
		}
		switch s := fmt.Sprint(v); s {
		case "", ".", "..":
			return "", fmt.Errorf("path parameter %s is %q, which would reach another path; give the parameter's value itself, such as an id", name, s)
		default:
			segs[i] = url.PathEscape(s)
		}
	}
	return strings.Join(segs, "/"), nil
}

// httpResult is an HTTP response, kept for the summary and the retries.
type httpResult struct {
	status int
	body   []byte
}

func (b *Bot) apiAgent(ctx context.Context, rec *recorder, req Request) AgentResult {
	// Run checked the request; the graph may also be run without it (a
	// LangGraph server serving Graph), so the agent checks again.
	if err := b.checkAPIContext(req); err != nil {
		return rec.fail(ctx, KindHTTP, err)
	}
	p, err := agent.Call[apiCallPlan](ctx, b.model, b.apiPrompt(req))
	if err != nil {
		return rec.fail(ctx, KindModel, modelFailure(err))
	}
	plan := p.Value
	if !plan.MakeRequest {
		return rec.fail(ctx, KindPlanningDeclined, errors.New(cmp.Or(plan.FailureReason, plan.Reason, "the model made no request")))
	}
	plan.Method = strings.ToUpper(plan.Method)
	rec.add(ctx, TraceDecision, "planned "+plan.Method+" "+plan.Path, map[string]any{"method": plan.Method, "path": plan.Path,
		"path_params": plan.PathParams, "query_params": plan.QueryParams, "reason": plan.Reason})
	if _, err := b.validatePlan(plan); err != nil {
		return rec.fail(ctx, KindPlanningDeclined, err)
	}
	base := b.baseURL(req)
	token := req.Context[CtxAPIBearerToken]
	refreshed, adjusted := false, false
	for {
		res, u, err := b.call(ctx, rec, req, base, plan, token)
		if err != nil {
			return rec.fail(ctx, KindHTTP, err)
		}
		switch {
		case res.status == http.StatusUnauthorized && !refreshed && b.refresh != nil && base == b.apiBase:
			// Only the configured base's tokens are refreshed: a base the
			// request chose gets no token of another API's.
			refreshed = true
			rec.add(ctx, TraceMessage, "401 Unauthorized: refreshing the token", map[string]any{"url": u})
			if token, err = b.refresh(ctx, b.apiBase, req); err != nil {
				return rec.fail(ctx, KindHTTP, fmt.Errorf("token refresh: %w", err))
			}
			continue
		case res.status == http.StatusBadRequest && !adjusted:
			adjusted = true
			rec.add(ctx, TraceMessage, "400 Bad Request: asking the model to adjust the parameters", map[string]any{"error": clip(string(res.body), 500)})
			np, err := agent.Call[apiCallPlan](ctx, b.model, b.adjustPrompt(req, plan, res))
			if err != nil {
				return rec.fail(ctx, KindModel, modelFailure(err))
			}
			if !np.Value.MakeRequest {
				return rec.fail(ctx, KindHTTP, fmt.Errorf("%s %s answered 400 (%s) and the model gave up: %s", plan.Method, plan.Path, clip(string(res.body), 200), np.Value.FailureReason))
			}
			np.Value.Method = strings.ToUpper(np.Value.Method)
			if _, err := b.validatePlan(np.Value); err != nil {
				return rec.fail(ctx, KindPlanningDeclined, err)
			}
			plan = np.Value
			rec.add(ctx, TraceDecision, "adjusted "+plan.Method+" "+plan.Path, map[string]any{"path_params": plan.PathParams, "query_params": plan.QueryParams, "json_body": plan.JSONBody})
			continue
		case res.status >= 400:
			return rec.fail(ctx, KindHTTP, fmt.Errorf("%s %s answered %d: %s", plan.Method, u, res.status, clip(string(res.body), 300)))
		}
		summary, err := agent.Complete(ctx, b.model, b.summaryPrompt(req, plan, u, res))
		if err != nil || strings.TrimSpace(summary.Text) == "" {
			return rec.fail(ctx, KindModel, fmt.Errorf("summarising the response: %v", cmp.Or(errString(err), "empty summary")))
		}
		table, terr := TabulateJSON(res.body)
		if terr != nil {
			table = nil
		}
		return rec.succeed(ctx, strings.TrimSpace(summary.Text), table)
	}
}

// call makes the planned request once (retrying 5xx and 429 under the
// policy) and returns its status and body; 4xx are results, not errors.
func (b *Bot) call(ctx context.Context, rec *recorder, req Request, base string, plan apiCallPlan, token string) (httpResult, string, error) {
	path, err := renderPath(plan.Path, plan.PathParams)
	if err != nil {
		return httpResult{}, "", resilience.MarkPermanent(fmt.Errorf("%s %s: %w", plan.Method, plan.Path, err))
	}
	u, err := url.Parse(base + path)
	if err != nil {
		return httpResult{}, "", err
	}
	if len(plan.QueryParams) > 0 {
		v := url.Values{}
		for k, x := range plan.QueryParams {
			v.Set(k, fmt.Sprint(x))
		}
		u.RawQuery = v.Encode()
	}
	var extra map[string]string
	if h := req.Context[CtxAPIHeaders]; h != "" {
		if err := json.Unmarshal([]byte(h), &extra); err != nil {
			return httpResult{}, "", fmt.Errorf("context %s: want a JSON object of strings: %w", CtxAPIHeaders, err)
		}
	}
	var body []byte
	if plan.JSONBody != nil {
		body, _ = json.Marshal(plan.JSONBody)
	}
	start := time.Now()
	attempts := 0
	res, err := b.httpPolicy.Do(ctx, func(ctx context.Context) (httpResult, error) {
		attempts++
		if attempts > 1 {
			rec.add(ctx, TraceMessage, fmt.Sprintf("retrying the HTTP call (attempt %d)", attempts), map[string]any{"attempt": attempts})
		}
		r, err := http.NewRequestWithContext(ctx, plan.Method, u.String(), bytes.NewReader(body))
		if err != nil {
			return httpResult{}, resilience.MarkPermanent(err)
		}
		r.Header.Set("Accept", "application/json")
		if body != nil {
			r.Header.Set("Content-Type", "application/json")
		}
		for k, v := range extra {
			r.Header.Set(k, v)
		}
		for k, v := range plan.Headers {
			if !strings.EqualFold(k, "Authorization") {
				r.Header.Set(k, v)
			}
		}
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := b.http.Do(r)
		if errors.Is(err, errOffOrigin) {
			return httpResult{}, resilience.MarkPermanent(err)
		}
		if err != nil {
			return httpResult{}, err
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			return httpResult{}, resilience.CheckResponse(resp)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return httpResult{resp.StatusCode, data}, err
	})
	ev := map[string]any{"method": plan.Method, "url": u.String(), "attempts": attempts, "elapsed_ms": time.Since(start).Milliseconds(), "authorized": token != ""}
	var he *resilience.HTTPError
	if errors.As(err, &he) {
		ev["status_code"] = he.StatusCode
	} else if err == nil {
		ev["status_code"] = res.status
	}
	rec.add(ctx, TraceTool, "executed HTTP request", ev)
	return res, u.String(), err
}

func (b *Bot) adjustPrompt(req Request, plan apiCallPlan, res httpResult) string {
	var s strings.Builder
	raw, _ := json.Marshal(plan)
	s.WriteString(MarkerAPIAdjust + "\n\nThe planned call was rejected with 400 Bad Request. Adjust its parameters so the API accepts it, keeping method and path, and answer with the whole corrected plan. If it cannot be fixed, set make_request to false and say why in failure_reason.\n\n")
	s.WriteString("## Question\n" + req.Question + "\n\n## Plan\n" + string(raw) + "\n\n## Error\n" + clip(string(res.body), 2000) + "\n\n## Endpoint\n")
	if e, ok := b.endpointOf(plan); ok {
		writeEndpoint(&s, e)
	}
	return s.String()
}

func (b *Bot) summaryPrompt(req Request, plan apiCallPlan, u string, res httpResult) string {
	return fmt.Sprintf("%s\n\nSummarise the API response for the question in one or two sentences: the status and the fields that answer it. Quote values exactly.\n\n## Question\n%s\n\n## Call\n%s %s\n\n## Status\n%d\n\n## Body\n%s\n",
		MarkerAPISummary, req.Question, plan.Method, u, res.status, clip(string(res.body), 4000))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) { // never cut a character in two
		n--
	}
	return s[:n] + "…"
}
