package bosai

import (
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"go.yaml.in/yaml/v4"
)

//go:embed apidocs.yaml
var demoDocs []byte

// Param is a parameter of an endpoint.
type Param struct {
	Name string `yaml:"name" json:"name"`
	// In is "path", "query", "body" or "header". A header parameter is a
	// request header the model may set for the endpoint; headers that
	// route, authenticate or frame the request (Host, Authorization,
	// Cookie, Forwarded, X-Forwarded-*, X-Real-IP, X-Original-URL,
	// X-Rewrite-URL, the method overrides and the hop-by-hop headers) may
	// not be declared.
	In          string   `yaml:"in" json:"in"`
	Required    bool     `yaml:"required" json:"required,omitempty"`
	Enum        []string `yaml:"enum" json:"enum,omitempty"`
	Description string   `yaml:"description" json:"description,omitempty"`
}

// Endpoint is one entry of the API agent's endpoint catalogue.
type Endpoint struct {
	// Method is the HTTP method, such as "GET".
	Method string `yaml:"method" json:"method"`
	// Path is the path below the API's base URL, starting with "/"; a
	// segment ":name" is a path parameter, as in "/v1/incidents/:id"; a
	// name is letters, digits and underscores, and the parameter is the
	// whole segment ("/v1/reports/:date.csv" is refused). A
	// parameter's value is escaped into its segment and may not be empty,
	// "." or "..".
	Path string `yaml:"path" json:"path"`
	// Summary says what the endpoint does; the model reads it.
	Summary string `yaml:"summary" json:"summary"`
	// Keywords are words of a question that point to the endpoint.
	Keywords []string `yaml:"keywords" json:"keywords,omitempty"`
	// Params are the endpoint's parameters.
	Params []Param `yaml:"params" json:"params,omitempty"`
	// Allowed permits a mutating method (POST, PUT, PATCH, DELETE): the
	// agent refuses to call a mutating endpoint without it.
	Allowed bool `yaml:"allowed" json:"allowed,omitempty"`
}

// Mutating reports whether the endpoint's method changes data.
func (e Endpoint) Mutating() bool {
	return e.Method != http.MethodGet && e.Method != http.MethodHead && e.Method != http.MethodOptions
}

// APIDocs is an API's documentation: the API agent's endpoint catalogue.
type APIDocs struct {
	Name      string     `yaml:"name" json:"name"`
	BaseURL   string     `yaml:"base_url" json:"base_url"`
	Auth      string     `yaml:"auth" json:"auth,omitempty"`
	Endpoints []Endpoint `yaml:"endpoints" json:"endpoints"`
}

// ParseAPIDocs reads API documentation in YAML (the format of
// apidocs.yaml): a name, a base_url and a list of endpoints with method,
// path, summary, keywords, params and allowed. It checks them as New
// checks Config.APIDocs (see Endpoint.Path and Param.In); an error names
// each endpoint and rule broken.
func ParseAPIDocs(data []byte) (*APIDocs, error) {
	var d APIDocs
	if err := yaml.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("bosai: API docs: %w", err)
	}
	if len(d.Endpoints) == 0 {
		return nil, fmt.Errorf("bosai: API docs list no endpoints; add an endpoints list")
	}
	if err := d.check(); err != nil {
		return nil, fmt.Errorf("bosai: API docs: %w", err)
	}
	return &d, nil
}

// check validates the docs, as ParseAPIDocs and New do, and upper-cases
// the endpoints' methods: each endpoint has a method and a path starting
// with "/" without query or fragment, whose parameters are whole segments,
// and each parameter is in the path, the query, the body or a header that
// a plan may set (see Param.In). A GET or HEAD endpoint has no body
// parameters, since the agent sends no body with them.
func (d *APIDocs) check() error {
	var errs []error
	for i := range d.Endpoints {
		e := &d.Endpoints[i]
		e.Method = strings.ToUpper(e.Method)
		if e.Method == "" || !strings.HasPrefix(e.Path, "/") || strings.ContainsAny(e.Path, "?#") {
			errs = append(errs, fmt.Errorf("endpoint %d (%s %q): a method and a path starting with / (without ? or #) are required", i+1, e.Method, e.Path))
			continue
		}
		for seg := range strings.SplitSeq(e.Path, "/") {
			if name, ok := strings.CutPrefix(seg, ":"); ok && !isParamName(name) {
				errs = append(errs, fmt.Errorf("%s %s: segment %q: a path parameter is a whole segment named after its colon, such as /:date; "+
					"put a suffix such as .csv in a segment of its own or in the parameter's value", e.Method, e.Path, seg))
			}
		}
		for _, p := range e.Params {
			switch {
			case p.In != "path" && p.In != "query" && p.In != "body" && p.In != "header":
				errs = append(errs, fmt.Errorf("%s %s: param %s: in is %q; want path, query, body or header", e.Method, e.Path, p.Name, p.In))
			case p.In == "body" && !bodyAllowed(e.Method):
				errs = append(errs, fmt.Errorf("%s %s: param %s: a %s request carries no body; declare it in query", e.Method, e.Path, p.Name, e.Method))
			case p.In == "header" && headerRefused(p.Name):
				errs = append(errs, fmt.Errorf("%s %s: param %s: the header %s routes, authenticates or frames the request and may not be set by a plan; "+
					"remove the param (the program's headers go in the context's %s)", e.Method, e.Path, p.Name, p.Name, CtxAPIHeaders))
			}
		}
	}
	return errors.Join(errs...)
}

// isParamName reports whether s is a path parameter's name: letters,
// digits and underscores.
func isParamName(s string) bool {
	return s != "" && strings.TrimFunc(s, func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }) == ""
}

// bodyAllowed reports whether a request of method carries a JSON body.
func bodyAllowed(method string) bool {
	return method != http.MethodGet && method != http.MethodHead
}

// headerRefused reports whether name is a header a plan may never set:
// one that routes the request (Host, Forwarded, X-Forwarded-*, X-Real-IP,
// X-Original-URL, X-Rewrite-URL), overrides its method, carries
// credentials (Authorization, Cookie, Proxy-Authorization), frames the
// body (Content-Length, Content-Type, Transfer-Encoding) or is hop-by-hop.
func headerRefused(name string) bool {
	k := http.CanonicalHeaderKey(strings.TrimSpace(name))
	switch k {
	case "", "Host", "Authorization", "Cookie", "Forwarded", "X-Real-Ip", "X-Original-Url", "X-Rewrite-Url",
		// Headers proxies route by or take a client's address from.
		"X-Host", "X-Original-Host", "X-Http-Host-Override", "Via", "True-Client-Ip", "X-Client-Ip",
		"Cf-Connecting-Ip", "X-Cluster-Client-Ip", "Fastly-Client-Ip", "X-Envoy-External-Address",
		"X-Http-Method-Override", "X-Http-Method", "X-Method-Override", "Content-Length", "Content-Type",
		"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return strings.HasPrefix(k, "X-Forwarded-")
}

// DemoAPIDocs returns the documentation of the demo API (apidocs.yaml).
func DemoAPIDocs() *APIDocs {
	d, err := ParseAPIDocs(demoDocs)
	if err != nil {
		panic(err) // the embedded file is tested
	}
	return d
}

// DemoClientID and DemoClientSecret are the demo API's credentials: POST
// them to /v1/auth/token for a bearer token.
const (
	DemoClientID     = "bosai-demo"
	DemoClientSecret = "demo-secret"
)

// DemoAPI returns an http.Handler serving the demo API of DemoAPIDocs with
// fixed data. Every endpoint but POST /v1/auth/token wants the bearer
// token that endpoint issues last; each issue replaces the previous token.
func DemoAPI() http.Handler {
	var mu sync.Mutex
	token := ""
	tickets := map[string]map[string]any{}
	next := 1
	docs := DemoAPIDocs()
	reply := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	authed := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			ok := token != "" && r.Header.Get("Authorization") == "Bearer "+token
			mu.Unlock()
			if !ok {
				w.Header().Set("WWW-Authenticate", "Bearer")
				reply(w, http.StatusUnauthorized, map[string]any{"error": "a valid bearer token is required; POST /v1/auth/token"})
				return
			}
			h(w, r)
		}
	}
	incidents := []map[string]any{
		{"id": "INC-204", "title": "Delayed event ingest in eu-west", "severity": "minor", "state": "monitoring"},
		{"id": "INC-198", "title": "Dashboard export timeouts", "severity": "major", "state": "resolved"},
		{"id": "INC-190", "title": "Login failures for SSO users", "severity": "critical", "state": "resolved"},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/auth/token", func(w http.ResponseWriter, r *http.Request) {
		var c struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if json.NewDecoder(r.Body).Decode(&c) != nil || c.ClientID != DemoClientID || c.ClientSecret != DemoClientSecret {
			reply(w, http.StatusUnauthorized, map[string]any{"error": "unknown client"})
			return
		}
		b := make([]byte, 12)
		rand.Read(b)
		mu.Lock()
		token = hex.EncodeToString(b)
		t := token
		mu.Unlock()
		reply(w, http.StatusOK, map[string]any{"access_token": t, "token_type": "bearer"})
	})
	mux.HandleFunc("GET /v1/endpoints", authed(func(w http.ResponseWriter, r *http.Request) {
		var out []map[string]any
		for _, e := range docs.Endpoints {
			out = append(out, map[string]any{"method": e.Method, "path": e.Path, "summary": e.Summary})
		}
		reply(w, http.StatusOK, map[string]any{"endpoints": out})
	}))
	mux.HandleFunc("GET /v1/status", authed(func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{"status": "degraded", "components": []map[string]any{
			{"name": "dashboards", "status": "operational"}, {"name": "ingest", "status": "degraded"}, {"name": "alerts", "status": "operational"}}})
	}))
	mux.HandleFunc("GET /v1/incidents", authed(func(w http.ResponseWriter, r *http.Request) {
		out := []map[string]any{}
		for _, k := range []string{"severity", "state"} {
			if v := r.URL.Query().Get(k); v != "" {
				var allowed []string
				for _, p := range docs.Endpoints[2].Params {
					if p.Name == k {
						allowed = p.Enum
					}
				}
				if !slices.Contains(allowed, v) {
					reply(w, http.StatusBadRequest, map[string]any{"error": fmt.Sprintf("query parameter %s is %q; it must be one of %s", k, v, strings.Join(allowed, ", "))})
					return
				}
			}
		}
		for _, inc := range incidents {
			if s := r.URL.Query().Get("severity"); s != "" && inc["severity"] != s {
				continue
			}
			if s := r.URL.Query().Get("state"); s != "" && inc["state"] != s {
				continue
			}
			out = append(out, inc)
		}
		reply(w, http.StatusOK, map[string]any{"incidents": out})
	}))
	mux.HandleFunc("GET /v1/incidents/{id}", authed(func(w http.ResponseWriter, r *http.Request) {
		for _, inc := range incidents {
			if strings.EqualFold(inc["id"].(string), r.PathValue("id")) {
				reply(w, http.StatusOK, inc)
				return
			}
		}
		reply(w, http.StatusNotFound, map[string]any{"error": "no incident " + r.PathValue("id")})
	}))
	mux.HandleFunc("GET /v1/regions", authed(func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{"regions": []map[string]any{
			{"id": "us-east", "location": "Virginia", "latency_ms": 38}, {"id": "eu-west", "location": "Dublin", "latency_ms": 41}}})
	}))
	mux.HandleFunc("POST /v1/tickets", authed(func(w http.ResponseWriter, r *http.Request) {
		var t map[string]any
		if json.NewDecoder(r.Body).Decode(&t) != nil || t["title"] == nil || t["title"] == "" {
			reply(w, http.StatusBadRequest, map[string]any{"error": "body field title is required"})
			return
		}
		mu.Lock()
		if len(tickets) >= 100 {
			mu.Unlock()
			reply(w, http.StatusTooManyRequests, map[string]any{"error": "the demo keeps 100 tickets"})
			return
		}
		id := fmt.Sprintf("T-%d", next)
		next++
		t["id"] = id
		tickets[id] = t
		mu.Unlock()
		reply(w, http.StatusCreated, t)
	}))
	mux.HandleFunc("DELETE /v1/tickets/{id}", authed(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		delete(tickets, r.PathValue("id"))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	return mux
}

// handlerTransport serves requests to host with a handler in this process
// and sends the others over the network.
type handlerTransport struct {
	host string
	h    http.Handler
}

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != t.host {
		return http.DefaultTransport.RoundTrip(r)
	}
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// rankEndpoints scores each endpoint by the question's words found in its
// keywords, path and summary (the seed's token scoring) and returns the k
// best with a score, best first; all endpoints when none scores.
func rankEndpoints(docs *APIDocs, question string, k int) []Endpoint {
	words := tokens(question)
	type scored struct {
		e Endpoint
		n int
	}
	var out []scored
	for _, e := range docs.Endpoints {
		vocab := append(slices.Clone(e.Keywords), strings.FieldsFunc(strings.ToLower(e.Path), func(r rune) bool { return r == '/' || r == ':' })...)
		vocab = append(vocab, tokens(e.Summary)...)
		n := 0
		for _, w := range words {
			if len(w) > 2 && slices.Contains(vocab, w) && !slices.Contains(stopWords, w) {
				n++
			}
		}
		if n > 0 {
			out = append(out, scored{e, n})
		}
	}
	if len(out) == 0 {
		return docs.Endpoints
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].n > out[j].n })
	if k > 0 && len(out) > k {
		out = out[:k]
	}
	es := make([]Endpoint, len(out))
	for i, s := range out {
		es[i] = s.e
	}
	return es
}
