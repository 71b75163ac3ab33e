package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// TestMetadataNumbersOutOfRangeRefused: a number in metadata, or in a
// search's metadata or values filter, that not every store holds (beyond
// a float64's range, rounded to zero by one, or of more than 1000
// characters) is refused with 422 naming its path, on every store, and
// the thread is left as it was. PostgreSQL answered 500 with its SQL
// error (value overflows numeric format) where SQLite stored the number.
func TestMetadataNumbersOutOfRangeRefused(t *testing.T) {
	long := "1" + strings.Repeat("0", 200_000)
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			tid, _ := interruptedThread(t, ts.URL, nil)
			for _, tc := range []struct {
				method, path, body, field string
			}{
				{"POST", "/threads", `{"metadata":{"n":1e999999999}}`, "metadata.n"},
				{"POST", "/threads", `{"metadata":{"n":` + long + `}}`, "metadata.n"},
				{"POST", "/threads", `{"metadata":{"n":1e-20000}}`, "metadata.n"},
				{"POST", "/threads", `{"metadata":{"n":0e-20000}}`, "metadata.n"},
				{"POST", "/threads", `{"metadata":{"n":-0.0e2000000000}}`, "metadata.n"},
				{"POST", "/threads", `{"metadata":{"n":0e-401}}`, "metadata.n"},
				{"POST", "/threads", `{"metadata":{"n":0E+99999999999999999999999}}`, "metadata.n"},
				{"POST", "/threads", `{"metadata":{"n":2.4e-324}}`, "metadata.n"},
				{"POST", "/threads", `{"metadata":{"a":{"b":[1,-1e400]}}}`, "metadata.a.b[1]"},
				{"POST", "/threads", `{"metadata":{"n":0.` + strings.Repeat("1", 20_000) + `}}`, "metadata.n"},
				{"PATCH", "/threads/" + tid, `{"metadata":{"n":1e999999999}}`, "metadata.n"},
				{"POST", "/threads/search", `{"metadata":{"n":1e999999999}}`, "metadata.n"},
				{"POST", "/threads/search", `{"values":{"n":1e999999999}}`, "values.n"},
				{"POST", "/threads/count", `{"metadata":{"n":1e999999999}}`, "metadata.n"},
				{"POST", "/threads/" + tid + "/runs/wait", `{"assistant_id":"agent","command":{"resume":"yes"},"metadata":{"n":1e999999999}}`, "metadata.n"},
				{"POST", "/threads/" + tid + "/runs", `{"assistant_id":"agent","command":{"resume":"yes"},"metadata":{"n":` + long + `}}`, "metadata.n"},
				{"POST", "/threads/" + tid + "/history", `{"metadata":{"n":1e999999999}}`, "metadata.n"},
			} {
				code, body := raw(t, tc.method, ts.URL+tc.path, tc.body, nil)
				if code != 422 || !strings.Contains(body, `"`+tc.field+`: the number `) || strings.Contains(body, "SQLSTATE") {
					t.Errorf("%s %s %.80s: %d %.300s; want 422 naming %s", tc.method, tc.path, tc.body, code, body, tc.field)
				}
			}
			var th struct {
				Status   string         `json:"status"`
				Metadata map[string]any `json:"metadata"`
			}
			do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &th)
			if th.Status != "interrupted" || th.Metadata["n"] != nil {
				t.Errorf("thread after the refusals: %+v; want interrupted, without n", th)
			}
			// Numbers every store holds are kept.
			for _, n := range []string{"1.7976931348623157e308", "5e-324", "-0", "9007199254740993", "0.000001", "3e-324", "0e-400", "-0.0E+400", "0e0"} {
				if code, body := raw(t, "POST", ts.URL+"/threads", `{"metadata":{"n":`+n+`}}`, nil); code != 200 {
					t.Errorf("metadata n=%s: %d %s; want 200", n, code, body)
				}
			}
		})
	}
}

// TestNumberTypeErrors: a number of the wrong kind for its field is
// answered with what the field takes and the field's path: a fraction
// where a whole number is expected, a whole number out of range, a
// number beyond a float64's range inside a value of any shape (named by
// its own path), a query's limit that is not a number.
func TestNumberTypeErrors(t *testing.T) {
	ts := newTestServer(t, backendConfigs["memory"](t))
	tid := newThread(t, ts.URL)
	for _, tc := range []struct {
		method, path, body, want string
	}{
		{"POST", "/threads/search", `{"limit":1.5}`, `limit: must be a whole number, not 1.5`},
		{"POST", "/threads/search", `{"limit":15e-1}`, `limit: must be a whole number, not 15e-1`},
		{"POST", "/threads/search", `{"limit":1e19}`, `limit: the whole number 1e19 is out of range`},
		// The path of the number that overflows, not of another one (the
		// body's other members were searched in map order).
		{"POST", "/threads/" + tid + "/runs/wait", `{"assistant_id":"agent","input":null,"metadata":{"m":1e400},"kwargs":{"k":-1e999},"config":{"configurable":{"a":"x","n":1e999999999}}}`, `config.configurable.n: the number 1e999999999 is beyond a float64's range`},
		{"POST", "/threads/search", `{"limit":"x"}`, `limit: must be a whole number, not a JSON string`},
		{"POST", "/threads/" + tid + "/runs/wait", `{"assistant_id":"agent","input":null,"config":{"recursion_limit":1e30}}`, `config.recursion_limit: the whole number 1e30 is out of range`},
		{"POST", "/threads/" + tid + "/runs/wait", `{"assistant_id":"agent","input":null,"config":{"configurable":{"a":"x","n":1e999999999}}}`, `config.configurable.n: the number 1e999999999 is beyond a float64's range`},
		{"GET", "/threads/" + tid + "/runs?limit=abc", ``, `limit: \"abc\" is not a whole number`},
		{"GET", "/threads/" + tid + "/runs?limit=5000", ``, `limit: \"5000\" is out of range`},
	} {
		for range 10 { // map order varies from one request to the next
			code, body := raw(t, tc.method, ts.URL+tc.path, tc.body, nil)
			if code != 422 || !strings.Contains(body, tc.want) {
				t.Errorf("%s %s %s: %d %s; want 422 with %s", tc.method, tc.path, tc.body, code, body, tc.want)
				break
			}
		}
	}
}

// TestWholeNumbersWithFractionAccepted: a whole number written with a
// fraction or an exponent (10.0, as Python's json.dumps writes a float,
// or 1e0) is taken by a field of whole numbers whose range holds it, as
// its integer. It was refused as "the whole number 10.0 is out of range".
func TestWholeNumbersWithFractionAccepted(t *testing.T) {
	ts := newTestServer(t, backendConfigs["memory"](t))
	for range 3 {
		newThread(t, ts.URL)
	}
	for body, want := range map[string]int{`{"limit":1.0}`: 1, `{"limit":2e0}`: 2, `{"limit":0.2e1,"offset":1.00}`: 2, `{"limit":10.0}`: 3} {
		var found []map[string]any
		if code := do(t, "POST", ts.URL+"/threads/search", json.RawMessage(body), nil, &found); code != 200 || len(found) != want {
			t.Errorf("POST /threads/search %s: %d, %d threads; want 200 with %d", body, code, len(found), want)
		}
	}
}

// TestRunInputNumbersNamed: a number in a run's input that the graph's
// state does not hold is refused naming its own path in the input and
// what is wrong with it, as a number in the body is (it was encoding/json's
// "must be a number, not a JSON number 1e400").
func TestRunInputNumbersNamed(t *testing.T) {
	ts := newTestServer(t, backendConfigs["memory"](t))
	type scores struct {
		Scores map[string]any `json:"scores"`
		Count  int8           `json:"count"`
	}
	g := graph.New[scores]()
	g.AddNode("noop", func(ctx context.Context, s scores) (graph.Update[scores], error) { return graph.Update[scores]{}, nil })
	g.AddEdge(graph.START, "noop").AddEdge("noop", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(ts.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(ts.Server, "scores", app); err != nil {
		t.Fatal(err)
	}
	for input, want := range map[string]string{
		`{"scores":{"a":{"b":[1,1e400]}}}`: `input.scores.a.b[1]: the number 1e400 is beyond a float64's range`,
		`{"count":1.5}`:                    `input.count: must be a whole number, not 1.5`,
		`{"count":300}`:                    `input.count: the whole number 300 is out of range`,
		`{"count":3.0}`:                    `input.count: must be a whole number written without a fraction or exponent, not 3.0`,
	} {
		code, body := raw(t, "POST", ts.URL+"/runs/wait", `{"assistant_id":"scores","input":`+input+`}`, nil)
		if code != 422 || !strings.Contains(body, want) {
			t.Errorf("input %s: %d %s; want 422 with %s", input, code, body, want)
		}
	}
}
