package bosai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	pathpkg "path"
	"slices"
	"strconv"
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
	// CtxAPIBearerToken is a bearer token to send. It is a secret: no
	// prompt shows it, and Run keeps it out of the run's saved state.
	CtxAPIBearerToken = "api_bearer_token"
	// CtxAPIHeaders is a JSON object of extra headers, such as
	// {"X-Tenant": "acme"}, set on every API call after the plan's (so
	// they win over the model's). Go callers may set it;
	// Bot.CheckUntrusted refuses it (Handler answers 400), since headers
	// sent with the Bot's credentials are the program's to choose, not an
	// HTTP caller's. Like the token, it stays out of prompts and saved
	// state.
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
	writeContext(&s, req.Context)
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
	if len(p.JSONBody) > 0 && !bodyAllowed(e.Method) {
		return e, fmt.Errorf("%s %s: a %s request carries no body; remove json_body and put the values in query_params", e.Method, e.Path, e.Method)
	}
	keyOf := func(in, name string) string { // header names match in any case
		if in == "header" {
			name = http.CanonicalHeaderKey(name)
		}
		return in + " " + name
	}
	declared := map[string]bool{}
	for _, prm := range e.Params {
		declared[keyOf(prm.In, prm.Name)] = true
	}
	for _, f := range []struct {
		in, field string
		keys      []string
	}{{"path", "path_params", slices.Collect(maps.Keys(p.PathParams))}, {"query", "query_params", slices.Collect(maps.Keys(p.QueryParams))},
		{"body", "json_body", slices.Collect(maps.Keys(p.JSONBody))}, {"header", "headers", slices.Collect(maps.Keys(p.Headers))}} {
		slices.Sort(f.keys)
		for _, k := range f.keys {
			if !declared[keyOf(f.in, k)] || f.in == "header" && headerRefused(k) {
				return e, fmt.Errorf("%s %s: %s.%s is not a %s parameter of the endpoint; remove it or use one the endpoint lists (%s)",
					e.Method, e.Path, f.field, k, f.in, paramNames(e, f.in))
			}
		}
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
			case "header":
				for k, h := range p.Headers {
					if strings.EqualFold(k, prm.Name) {
						v = h
					}
				}
			}
			if v == nil || v == "" {
				return e, fmt.Errorf("%s %s: the %s parameter %s is required", e.Method, e.Path, prm.In, prm.Name)
			}
		}
	}
	return e, nil
}

// paramNames lists the names of e's parameters in in, or says there are
// none.
func paramNames(e Endpoint, in string) string {
	var names []string
	for _, p := range e.Params {
		if p.In == in {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return "it has none"
	}
	return strings.Join(names, ", ")
}

// secretKeys are the request context's secrets: Run moves them out of
// the graph's state (so that no checkpoint holds them) into the run's
// context.Context, where the API agent reads them.
var secretKeys = []string{CtxAPIBearerToken, CtxAPIHeaders}

// secretsKey is the context key of a run's secrets.
type secretsKey struct{}

// withSecrets moves req's secrets into ctx, and returns req without them.
func withSecrets(ctx context.Context, req Request) (context.Context, Request) {
	s := map[string]string{}
	for _, k := range secretKeys {
		if v, ok := req.Context[k]; ok {
			s[k] = v
		}
	}
	return context.WithValue(ctx, secretsKey{}, s), req.WithoutSecrets()
}

// secretsOf returns the run's secrets: those Run moved into ctx, else,
// for a graph run without Run (a LangGraph server), req's context's.
func secretsOf(ctx context.Context, req Request) map[string]string {
	if s, ok := ctx.Value(secretsKey{}).(map[string]string); ok {
		return s
	}
	return req.Context
}

// WithoutSecrets returns r without its context's secrets
// (CtxAPIBearerToken, CtxAPIHeaders), for state that is shown or stored.
// r's context map is not modified.
func (r Request) WithoutSecrets() Request {
	if !slices.ContainsFunc(secretKeys, func(k string) bool { _, ok := r.Context[k]; return ok }) {
		return r
	}
	c := maps.Clone(r.Context)
	for _, k := range secretKeys {
		delete(c, k)
	}
	r.Context = c
	return r
}

// CheckUntrusted checks a request from a caller the program does not
// trust with its API credentials, such as an HTTP client: as Run does
// (Request.Validate and the context's CtxAPIBaseURL, both ErrInvalidRequest),
// and it refuses a context CtxAPIHeaders, since the headers sent with the
// Bot's credentials are the program's. Every HTTP entry calls it: Handler
// and the LangGraph front of examples/agentserver. req is normalized
// first (Request.Normalize).
func (b *Bot) CheckUntrusted(req Request) error {
	req = req.Normalize()
	var errs []error
	if err := b.validate(req); err != nil {
		errs = append(errs, err)
	}
	if _, ok := req.Context[CtxAPIHeaders]; ok {
		errs = append(errs, fmt.Errorf("%w: context %s is not accepted from this caller: the API agent's headers are the program's "+
			"configuration (a Go caller's context, or Config.HTTPClient); remove the key", ErrInvalidRequest, CtxAPIHeaders))
	}
	return errors.Join(errs...)
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

// errOffBase marks a redirect out of the chosen base URL's path.
var errOffBase = errors.New("bosai: the API redirected out of its base URL's path; the agent follows redirects below the base URL only")

// apiBaseKey is the context key of the base URL an API call was made
// under: its redirects must stay below it.
type apiBaseKey struct{}

// sameOriginClient returns a copy of c (http.DefaultClient when nil) that
// follows a redirect only to the origin (scheme, host and port) of the
// request that met it, and, for the API agent's calls, only below the
// path of the base URL the call was made under (so that bases sharing an
// origin stay apart), so that the headers and bodies of the API's calls,
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
		if base, ok := r.Context().Value(apiBaseKey{}).(string); ok {
			if bu, err := url.Parse(base); err != nil || !underPath(r.URL, strings.TrimSuffix(bu.Path, "/")) {
				return fmt.Errorf("%w (%s is not under %s)", errOffBase, r.URL.Redacted(), base)
			}
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
		switch s := formatValue(v); s {
		case "", ".", "..":
			return "", fmt.Errorf("path parameter %s is %q, which would reach another path; give the parameter's value itself, such as an id", name, s)
		default:
			segs[i] = url.PathEscape(s)
		}
	}
	return strings.Join(segs, "/"), nil
}

// formatValue writes a plan's parameter value as text: a JSON number in
// plain decimal (1000000, not 1e+06), anything else as fmt.Sprint does.
func formatValue(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// joinAPIPath appends the rendered path to base and checks that the URL
// stays on base's origin and under base's path, so that no parameter can
// choose another host or path.
func joinAPIPath(base, path string) (*url.URL, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("the rendered path %q does not start with /; the docs' paths must", path)
	}
	bu, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(base + path)
	if err != nil {
		return nil, err
	}
	if origin(u) != origin(bu) || !underPath(u, strings.TrimSuffix(bu.Path, "/")) || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("the rendered path %q leaves the API's base URL %s; give parameter values, not paths", path, base)
	}
	return u, nil
}

// underPath reports whether u's cleaned path is basePath or below it.
func underPath(u *url.URL, basePath string) bool {
	p := pathpkg.Clean("/" + u.Path)
	return basePath == "" || p == basePath || strings.HasPrefix(p, basePath+"/")
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
	secrets := secretsOf(ctx, req)
	token := secrets[CtxAPIBearerToken]
	refreshed, adjusted := false, false
	for {
		res, u, err := b.call(ctx, rec, secrets[CtxAPIHeaders], base, plan, token)
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
func (b *Bot) call(ctx context.Context, rec *recorder, headers, base string, plan apiCallPlan, token string) (httpResult, string, error) {
	path, err := renderPath(plan.Path, plan.PathParams)
	if err != nil {
		return httpResult{}, "", resilience.MarkPermanent(fmt.Errorf("%s %s: %w", plan.Method, plan.Path, err))
	}
	u, err := joinAPIPath(base, path)
	if err != nil {
		return httpResult{}, "", resilience.MarkPermanent(fmt.Errorf("%s %s: %w", plan.Method, plan.Path, err))
	}
	if len(plan.QueryParams) > 0 {
		v := url.Values{}
		for k, x := range plan.QueryParams {
			v.Set(k, formatValue(x))
		}
		u.RawQuery = v.Encode()
	}
	var extra map[string]string
	if headers != "" {
		if err := json.Unmarshal([]byte(headers), &extra); err != nil {
			return httpResult{}, "", fmt.Errorf("context %s: want a JSON object of strings: %w", CtxAPIHeaders, err)
		}
	}
	var body []byte
	if plan.JSONBody != nil && bodyAllowed(plan.Method) {
		body, _ = json.Marshal(plan.JSONBody)
	}
	names := make([]string, 0, len(plan.Headers)+len(extra))
	for k := range plan.Headers {
		if !headerRefused(k) { // validatePlan refused them; kept out here too
			names = append(names, http.CanonicalHeaderKey(k))
		}
	}
	for k := range extra {
		names = append(names, http.CanonicalHeaderKey(k))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	start := time.Now()
	attempts := 0
	res, err := b.httpPolicy.Do(ctx, func(ctx context.Context) (httpResult, error) {
		attempts++
		if attempts > 1 {
			rec.add(ctx, TraceMessage, fmt.Sprintf("retrying the HTTP call (attempt %d)", attempts), map[string]any{"attempt": attempts})
		}
		var rb io.Reader
		if body != nil {
			rb = bytes.NewReader(body)
		}
		r, err := http.NewRequestWithContext(context.WithValue(ctx, apiBaseKey{}, base), plan.Method, u.String(), rb)
		if err != nil {
			return httpResult{}, resilience.MarkPermanent(err)
		}
		r.Header.Set("Accept", "application/json")
		if body != nil {
			r.Header.Set("Content-Type", "application/json")
		}
		// The plan's headers (validatePlan let only declared ones
		// through), then the program's, which win.
		for k, v := range plan.Headers {
			if !headerRefused(k) {
				r.Header.Set(k, v)
			}
		}
		for k, v := range extra {
			r.Header.Set(k, v)
		}
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := b.http.Do(r)
		if errors.Is(err, errOffOrigin) || errors.Is(err, errOffBase) {
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
	ev := map[string]any{"method": plan.Method, "url": u.String(), "attempts": attempts, "elapsed_ms": time.Since(start).Milliseconds(), "authorized": token != "", "headers": names}
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
