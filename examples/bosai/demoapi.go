package bosai

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
)

// Endpoint is one entry of the API agent's endpoint catalogue (the seed's
// API documentation).
type Endpoint struct {
	// Method is the HTTP method, such as "GET".
	Method string
	// Path is the path below the API's base URL, such as "/v1/status".
	Path string
	// Description says what the endpoint returns; the model reads it.
	Description string
	// Keywords are the words of a question that point to the endpoint;
	// they rank the endpoints shown to the model.
	Keywords []string
}

// Endpoints is the catalogue of Acme's service API that the API agent
// plans calls against. DemoAPI serves it offline.
var Endpoints = []Endpoint{
	{"GET", "/v1/status", "overall service status and the status of each component",
		[]string{"status", "operational", "up", "down", "outage", "health", "component", "components"}},
	{"GET", "/v1/incidents", "recent incidents with their severity and state",
		[]string{"incident", "incidents", "outage", "outages", "severity", "resolved", "recent"}},
	{"GET", "/v1/regions", "hosting regions with their location and latency",
		[]string{"region", "regions", "location", "latency", "hosting", "datacenter", "eu", "us"}},
}

// DemoAPI returns an http.Handler serving Endpoints with fixed demo data,
// so the API agent runs offline.
func DemoAPI() http.Handler {
	mux := http.NewServeMux()
	reply := func(v any) http.HandlerFunc {
		body, _ := json.Marshal(v)
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}
	}
	mux.HandleFunc("GET /v1/status", reply(map[string]any{
		"status": "degraded",
		"components": []map[string]any{
			{"name": "dashboards", "status": "operational"},
			{"name": "ingest", "status": "degraded"},
			{"name": "alerts", "status": "operational"},
		},
	}))
	mux.HandleFunc("GET /v1/incidents", reply(map[string]any{
		"incidents": []map[string]any{
			{"id": "INC-204", "title": "Delayed event ingest in eu-west", "severity": "minor", "state": "monitoring"},
			{"id": "INC-198", "title": "Dashboard export timeouts", "severity": "major", "state": "resolved"},
		},
	}))
	mux.HandleFunc("GET /v1/regions", reply(map[string]any{
		"regions": []map[string]any{
			{"id": "us-east", "location": "Virginia", "latency_ms": 38},
			{"id": "eu-west", "location": "Dublin", "latency_ms": 41},
		},
	}))
	return mux
}

// handlerTransport serves HTTP requests with a handler in this process.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// rankEndpoints returns the endpoints whose keywords the question uses,
// best first, or all of them when none matches (the seed's token-based
// endpoint scoring).
func rankEndpoints(question string) []Endpoint {
	words := tokens(question)
	type scored struct {
		e Endpoint
		n int
	}
	var out []scored
	for _, e := range Endpoints {
		n := 0
		for _, k := range e.Keywords {
			if slices.Contains(words, k) {
				n++
			}
		}
		for _, seg := range strings.Split(strings.Trim(e.Path, "/"), "/") {
			if slices.Contains(words, seg) {
				n++
			}
		}
		if n > 0 {
			out = append(out, scored{e, n})
		}
	}
	if len(out) == 0 {
		return Endpoints
	}
	slices.SortStableFunc(out, func(a, b scored) int { return b.n - a.n })
	es := make([]Endpoint, len(out))
	for i, s := range out {
		es[i] = s.e
	}
	return es
}
