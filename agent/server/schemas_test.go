package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// hook is a func that JSON encodes as its name: the JSON Schema
// reflection, which sees a func, has no schema for it.
type hook func()

// MarshalJSON implements json.Marshaler.
func (hook) MarshalJSON() ([]byte, error) { return []byte(`"hook"`), nil }

// UnmarshalJSON implements json.Unmarshaler.
func (*hook) UnmarshalJSON([]byte) error { return nil }

// withFunc is a state the JSON Schema reflection cannot describe: a
// field of type hook.
type withFunc struct {
	Text string `json:"text"`
	Hook hook   `json:"hook,omitempty"`
}

// registerNoop registers graph id, a single node doing nothing, with
// state S, on srv.
func registerNoop[S any](t *testing.T, srv *server.Server, id string, opts ...server.GraphOption[S]) {
	t.Helper()
	g := graph.New[S]()
	g.AddNode("noop", func(context.Context, S) (graph.Update[S], error) { return graph.Update[S]{}, nil })
	g.AddEdge(graph.START, "noop").AddEdge("noop", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, id, app, opts...); err != nil {
		t.Fatal(err)
	}
}

// schemasOf reads GET /assistants/{id}/schemas.
func schemasOf(t *testing.T, url, id string) map[string]json.RawMessage {
	t.Helper()
	var out map[string]json.RawMessage
	if code := do(t, "GET", url+"/assistants/"+id+"/schemas", nil, nil, &out); code != http.StatusOK {
		t.Fatalf("GET /assistants/%s/schemas: status %d, want 200", id, code)
	}
	return out
}

// TestSchemasOfRecursiveAndUnsupportedStates: the schemas of a recursive
// state (react.State: a message's parts hold tool results holding parts)
// are served with references, and a state holding a func, which has no
// JSON Schema, is registered and described as a free object instead of
// crashing the server.
func TestSchemasOfRecursiveAndUnsupportedStates(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	registerNoop[react.State](t, srv, "react")
	registerNoop[withFunc](t, srv, "func")
	url := newHTTPServer(t, srv)

	var st struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(schemasOf(t, url, "react")["state_schema"], &st); err != nil {
		t.Fatal(err)
	}
	if st.Type != "object" || st.Properties["messages"] == nil || len(st.Defs) == 0 {
		t.Errorf("react.State's schema: type %q, properties %v, %d $defs; want an object with messages and $defs", st.Type, st.Properties, len(st.Defs))
	}
	got := schemasOf(t, url, "func")
	for _, k := range []string{"input_schema", "state_schema", "output_schema"} {
		if string(got[k]) != `{"type":"object"}` {
			t.Errorf("%s of a state holding a func: %s, want a free object", k, got[k])
		}
	}
}

// TestSchemasOfCodec: a graph whose codec decides its JSON form has the
// codec's schemas, and free objects where the codec gives none.
func TestSchemasOfCodec(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	in := func(json.RawMessage) (chat, error) { return chat{}, nil }
	values := func(chat) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }
	registerNoop(t, srv, "bare", server.WithCodec(server.Codec[chat]{Input: in, Values: values}))
	registerNoop(t, srv, "given", server.WithCodec(server.Codec[chat]{Input: in, InputSchema: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"}}}`)}))
	url := newHTTPServer(t, srv)

	bare := schemasOf(t, url, "bare")
	for _, k := range []string{"input_schema", "state_schema", "output_schema"} {
		if string(bare[k]) != `{"type":"object"}` {
			t.Errorf("bare codec: %s is %s, want a free object", k, bare[k])
		}
	}
	given := schemasOf(t, url, "given")
	if string(given["input_schema"]) != `{"type":"object","properties":{"question":{"type":"string"}}}` {
		t.Errorf("input_schema: %s, want the codec's", given["input_schema"])
	}
	var st struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(given["state_schema"], &st); err != nil || st.Properties["messages"] == nil {
		t.Errorf("state_schema with the default Values: %s, want the state's reflected schema", given["state_schema"])
	}
}
