package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestRegisterRefusesAnotherCheckpointer: Register refuses a graph
// compiled without a checkpointer (every run failed with an internal
// error, logged nowhere by default) or with a saver other than the
// server's (DELETE /threads/{id} left its checkpoints, and the thread's
// bytes were not counted), naming the fix, and takes one compiled with
// the server's.
func TestRegisterRefusesAnotherCheckpointer(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	compile := func(opts ...graph.CompileOption) *graph.Compiled[chat] {
		g := graph.New[chat]()
		g.AddNode("a", func(context.Context, chat) (graph.Update[chat], error) { return graph.Update[chat]{}, nil })
		g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
		c, err := g.Compile(opts...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		id    string
		g     *graph.Compiled[chat]
		wants []string
	}{
		{"plain", compile(), []string{`graph "plain"`, "without a checkpointer", "graph.WithCheckpointer(srv.Checkpointer())"}},
		{"other", compile(graph.WithCheckpointer(checkpoint.NewMemory())), []string{`graph "other"`, "not the server's", "Config.Checkpointer", "graph.WithCheckpointer(srv.Checkpointer())"}},
	} {
		err := server.Register(srv, tc.id, tc.g)
		if err == nil {
			t.Errorf("Register(%s) = nil; want it refused", tc.id)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Register(%s) = %q; want it to say %q", tc.id, err, w)
			}
		}
	}
	if err := server.Register(srv, "own", compile(graph.WithCheckpointer(srv.Checkpointer()))); err != nil {
		t.Errorf("Register of a graph with the server's checkpointer: %v", err)
	}
}

// TestRunInputUnknownKeyRefused: the default codec refuses an input key
// that names no field of the state, with 422 naming the key and the
// fields, on runs and on state updates (the run was made and the key
// dropped); keys matching a field regardless of case, as encoding/json
// matches them, are taken.
func TestRunInputUnknownKeyRefused(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{"metadata": map[string]any{"graph_id": "agent"}}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	code, body := raw(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait", `{"assistant_id":"agent","input":{"Bogus":1}}`, nil)
	if code != 422 || !strings.Contains(body, `input.Bogus: not a field of the state of graph \"agent\"`) || !strings.Contains(body, "approved, messages") {
		t.Errorf("run with an unknown input key: %d %s; want 422 naming input.Bogus and the fields", code, body)
	}
	code, body = raw(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/state", `{"values":{"approved":"x","Bogus":1}}`, nil)
	if code != 422 || !strings.Contains(body, `values.Bogus: not a field`) {
		t.Errorf("state update with an unknown key: %d %s; want 422 naming values.Bogus", code, body)
	}
	var out chat
	if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"Messages": []msg{{Type: "human", Content: "hi"}}}}, nil, &out); code != 200 || last(out) != "draft for: hi" {
		t.Errorf("run with a key of another case: %d %+v; want it read as messages", code, out)
	}
}

// TestReactAgentReadsLangChainMessages: a react agent served with the
// default codec reads the LangChain messages the official SDKs send
// ({role, content}; {type, content} with content blocks; an ai message
// with tool_calls and its tool message) as the model's messages. (They
// were stored with "parts": null, and the model got empty turns.)
func TestReactAgentReadsLangChainMessages(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	llm := llmtest.New(llmtest.Text("Paris is 15C"), llmtest.Text("you are welcome"))
	ag, err := react.New(react.Config{Model: llm, Checkpointer: srv.Checkpointer()})
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "agent", ag); err != nil {
		t.Fatal(err)
	}
	url := newHTTPServer(t, srv)
	var out struct {
		Messages model.Messages `json:"messages"`
	}
	if code := do(t, "POST", url+"/runs/wait", json.RawMessage(`{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"weather in Paris?"}]}}`), nil, &out); code != 200 {
		t.Fatalf("run: %d", code)
	}
	calls := llm.Calls()
	if len(calls) != 1 || calls[0].Prompt != "weather in Paris?" {
		t.Fatalf("the model was asked %+v; want the user's text", calls)
	}
	if len(out.Messages) != 2 || out.Messages[0].Text() != "weather in Paris?" || out.Messages[1].Text() != "Paris is 15C" {
		t.Errorf("messages %+v", out.Messages)
	}
	in := `{"assistant_id":"agent","input":{"messages":[
		{"type":"human","content":[{"type":"text","text":"weather "},"in Rome?"]},
		{"type":"ai","id":"a1","content":"","tool_calls":[{"id":"c1","name":"weather","args":{"city":"Rome"},"type":"tool_call"}]},
		{"type":"tool","tool_call_id":"c1","name":"weather","content":"20C"},
		{"type":"human","content":"thanks"}]}}`
	if code := do(t, "POST", url+"/runs/wait", json.RawMessage(in), nil, &out); code != 200 {
		t.Fatalf("second run: %d", code)
	}
	req := llm.Calls()[1].Request
	var got []model.Message
	for _, m := range req.Messages {
		if m.Role != model.RoleSystem {
			got = append(got, m)
		}
	}
	if len(got) != 4 || got[0].Role != model.RoleUser || got[0].Text() != "weather in Rome?" ||
		len(got[1].ToolCalls()) != 1 || got[1].ToolCalls()[0].Name != "weather" || string(got[1].ToolCalls()[0].Arguments) != `{"city":"Rome"}` ||
		got[2].Role != model.RoleTool || got[2].Parts[0].ToolResult.CallID != "c1" || got[2].Parts[0].ToolResult.Text() != "20C" ||
		got[3].Text() != "thanks" {
		b, _ := json.Marshal(got)
		t.Errorf("the model was given %s", b)
	}
	code, body := raw(t, "POST", url+"/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"type":"human","content":[{"type":"audio","data":"x"}]}]}}`, nil)
	if code != 422 || !strings.Contains(body, "input.messages[0].content[0].type") || !strings.Contains(body, `\"audio\"`) {
		t.Errorf("a block of another type: %d %s; want 422 naming it", code, body)
	}
}

// TestOnCompletionOfThreadRunNotKept: on_completion applies to stateless
// runs only: a run on a thread does not keep it in its kwargs (it showed
// "on_completion":"delete", which its thread is not), as LangGraph does
// not; a stateless run keeps it.
func TestOnCompletionOfThreadRunNotKept(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	type run struct {
		RunID  string         `json:"run_id"`
		Kwargs map[string]any `json:"kwargs"`
	}
	for _, body := range []map[string]any{
		{"assistant_id": "agent", "input": humanInput("a")},
		{"assistant_id": "agent", "input": humanInput("b"), "on_completion": "delete"},
	} {
		var r run
		if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs", body, nil, &r); code != 200 {
			t.Fatalf("create run: %d", code)
		}
		if v, ok := r.Kwargs["on_completion"]; ok {
			t.Errorf("kwargs of a run on a thread hold on_completion %v; want none", v)
		}
		do(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/runs/"+r.RunID+"/join", nil, nil, nil)
	}
	var r run
	if code := do(t, "POST", ts.URL+"/runs", map[string]any{"assistant_id": "agent", "input": humanInput("c"), "on_completion": "keep"}, nil, &r); code != 200 {
		t.Fatalf("create stateless run: %d", code)
	}
	if r.Kwargs["on_completion"] != "keep" {
		t.Errorf("kwargs of a stateless run: on_completion %v; want keep", r.Kwargs["on_completion"])
	}
}
