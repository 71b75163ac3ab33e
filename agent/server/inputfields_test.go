package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/agent/server"
)

// TestWithInputFields: a graph registered WithInputFields takes only
// those keys from clients, in a run's input and in a state update; the
// others (a react agent's iterations and usage, which a client could
// fake) are refused with 422 naming every one of them, sorted, and the
// keys a client may write. Register refuses a key naming no field, and
// WithInputFields with a Codec.Input, which decides alone.
func TestWithInputFields(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	llm := llmtest.New(llmtest.Text("hello"))
	ag, err := react.New(react.Config{Model: llm, Checkpointer: srv.Checkpointer()})
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "bad", ag, server.WithInputFields[react.State]("messages", "Iterations")); err == nil || !strings.Contains(err.Error(), `"Iterations" names no field`) {
		t.Errorf("Register with a key naming no field: %v; want an error naming it", err)
	}
	codec := server.Codec[react.State]{Input: func(json.RawMessage) (react.State, error) { return react.State{}, nil }}
	if err := server.Register(srv, "bad", ag, server.WithCodec(codec), server.WithInputFields[react.State]("messages")); err == nil || !strings.Contains(err.Error(), "Codec.Input") {
		t.Errorf("Register with WithInputFields and a Codec.Input: %v; want an error naming both", err)
	}
	if err := server.Register(srv, "agent", ag, server.WithInputFields[react.State]("messages", "instructions")); err != nil {
		t.Fatal(err)
	}
	url := newHTTPServer(t, srv)
	code, body := raw(t, "POST", url+"/runs/wait", `{"assistant_id":"agent","input":{"usage":{"input_tokens":-5},"messages":[{"role":"user","content":"hi"}],"iterations":-5000}}`, nil)
	if code != 422 || !strings.Contains(body, "input.iterations, input.usage: not a field clients may write") || !strings.Contains(body, "give only: instructions, messages") {
		t.Errorf("run writing iterations and usage: %d %s; want 422 naming both, sorted, and the writable keys", code, body)
	}
	if calls := llm.Calls(); len(calls) != 0 {
		t.Errorf("the model was called %d times for a refused input", len(calls))
	}
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", url+"/threads", map[string]any{"metadata": map[string]any{"graph_id": "agent"}}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	code, body = raw(t, "POST", url+"/threads/"+th.ThreadID+"/state", `{"values":{"outcome":"answered"}}`, nil)
	if code != 422 || !strings.Contains(body, "values.outcome: not a field clients may write") {
		t.Errorf("state update writing outcome: %d %s; want 422 naming values.outcome", code, body)
	}
	var out struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if code := do(t, "POST", url+"/threads/"+th.ThreadID+"/runs/wait", json.RawMessage(`{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"hi"}],"instructions":"be brief"}}`), nil, &out); code != 200 || len(out.Messages) != 2 {
		t.Errorf("run with messages and instructions: %d %d messages; want 200 and a reply", code, len(out.Messages))
	}
}

// TestRunInputUnknownKeysAllSorted: the default codec names every
// unknown input key, sorted, whatever the order of the map it read them
// into (it named one, picked at random).
func TestRunInputUnknownKeysAllSorted(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	for range 5 {
		code, body := raw(t, "POST", ts.URL+"/runs/wait", `{"assistant_id":"agent","input":{"zeta":1,"Bogus":1,"alpha":1}}`, nil)
		if code != 422 || !strings.Contains(body, "input.Bogus, input.alpha, input.zeta: not a field of the state") {
			t.Fatalf("run with unknown keys: %d %s; want 422 naming all of them, sorted", code, body)
		}
	}
}
