package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// talk is a state whose field has no JSON tag, written by its Codec under
// a key of another case ("Messages" as "messages").
type talk struct{ Messages []string }

var talkMessages = graph.Append(func(s *talk) *[]string { return &s.Messages })

type tally struct{ N int }

var tallyN = graph.Replace(func(s *tally) *int { return &s.N })

// serveInvoking serves the graph "nested": its node "turn" runs another graph
// (which has a subgraph node) with Invoke, as a node wrapping a whole
// application does, and answers with how far it counted.
func serveInvoking(t *testing.T) string {
	t.Helper()
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := graph.New[tally]()
	leaf.AddNode("leaf", func(ctx context.Context, s tally) (graph.Update[tally], error) { return tallyN.Set(s.N + 1), nil })
	leaf.AddEdge(graph.START, "leaf").AddEdge("leaf", graph.END)
	lc, err := leaf.Compile()
	if err != nil {
		t.Fatal(err)
	}
	ig := graph.New[tally]()
	ig.AddNode("first", func(ctx context.Context, s tally) (graph.Update[tally], error) { return tallyN.Set(s.N + 1), nil })
	graph.AddSubgraph(ig, "sub", lc, func(s tally) tally { return s }, func(s tally) graph.Update[tally] { return tallyN.Set(s.N) })
	ig.AddEdge(graph.START, "first").AddEdge("first", "sub").AddEdge("sub", graph.END)
	inner, err := ig.Compile()
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[talk]()
	g.AddNode("turn", func(ctx context.Context, s talk) (graph.Update[talk], error) {
		out, err := inner.Invoke(ctx, tally{})
		if err != nil {
			return graph.Update[talk]{}, err
		}
		return talkMessages.Set([]string{fmt.Sprint("counted ", out.N)}), nil
	})
	g.AddEdge(graph.START, "turn").AddEdge("turn", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	codec := server.Codec[talk]{
		Input: func(data json.RawMessage) (talk, error) {
			var in struct {
				Messages []string `json:"messages"`
			}
			err := json.Unmarshal(data, &in)
			return talk{Messages: in.Messages}, err
		},
		Values: func(s talk) (json.RawMessage, error) {
			return json.Marshal(map[string]any{"messages": append([]string{}, s.Messages...)})
		},
	}
	if err := server.Register(srv, "nested", app, server.WithCodec(codec)); err != nil {
		t.Fatal(err)
	}
	return newHTTPServer(t, srv)
}

// A run whose node runs another graph with Invoke streams the values of its
// own state alone: no values event in the middle of the run shows an empty
// conversation (the inner graph's subgraph's values, typed as the outer
// state's zero value), and its updates event holds what the node wrote,
// under the key the Codec writes.
func TestNestedRunStreamsOnlyItsOwnValues(t *testing.T) {
	url := serveInvoking(t)
	tid := newThread(t, url)
	body := `{"assistant_id":"nested","input":{"messages":["hello"]},"stream_mode":["values","updates"]}`
	code, out := raw(t, "POST", url+"/threads/"+tid+"/runs/stream", body, nil)
	if code != 200 {
		t.Fatalf("stream: %d %s", code, out)
	}
	var values []string
	var updates []string
	for _, ev := range readSSE(t, strings.NewReader(out)) {
		switch ev.Name {
		case "values":
			values = append(values, string(ev.Data))
		case "updates":
			updates = append(updates, string(ev.Data))
		}
	}
	wantValues := []string{`{"messages":["hello"]}`, `{"messages":["hello","counted 2"]}`}
	if strings.Join(values, " ") != strings.Join(wantValues, " ") {
		t.Errorf("values events = %q, want %q", values, wantValues)
	}
	wantUpdates := []string{`{"turn":{"messages":["counted 2"]}}`}
	if strings.Join(updates, " ") != strings.Join(wantUpdates, " ") {
		t.Errorf("updates events = %q, want %q", updates, wantUpdates)
	}
}
