package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// convo is the state of a graph whose one node answers through
// graph.Generate.
type convo struct {
	Messages model.Messages `json:"messages"`
}

var convoMessages = graph.Merge(func(s *convo) *model.Messages { return &s.Messages })

// TestOfficialJSClientState drives, with the official JS client, what
// useStream relies on beyond the core flows: the ids of streamed model
// replies are those the replies have in the thread's state (graph.Generate
// in a node of one's own, and the react agent's model node); new input on
// a checkpoint with pending tasks (a paused thread, or a past checkpoint
// the client branches from) runs from that checkpoint, the pending tasks
// superseded; each checkpoint's metadata holds the run's metadata, run_id,
// thread_id, graph_id and assistant_id.
func TestOfficialJSClientState(t *testing.T) {
	modules := nodeModules(t)
	for _, script := range []string{"messageids.mjs", "branch.mjs", "checkpointmeta.mjs"} {
		t.Run(script, func(t *testing.T) {
			ts := newTestServer(t, server.Config{Authenticate: apiKeys(t, map[string]string{"test-key-0123456789": "tester"})})
			registerModelGraphs(t, ts.Server)
			runScript(t, modules, script, ts.URL, "test-key-0123456789")
		})
	}
	// Branching and checkpoint metadata on the embedded SQLite store and
	// checkpointer.
	for _, script := range []string{"branch.mjs", "checkpointmeta.mjs"} {
		t.Run("sqlite/"+script, func(t *testing.T) {
			cfg := sqliteConfig(t)
			cfg.Authenticate = apiKeys(t, map[string]string{"test-key-0123456789": "tester"})
			ts := newTestServer(t, cfg)
			runScript(t, modules, script, ts.URL, "test-key-0123456789")
		})
	}
}

// registerModelGraphs registers "gen", a graph whose node answers through
// graph.Generate, and "react", a react agent, both on a scripted model
// that streams its replies in several chunks.
func registerModelGraphs(t *testing.T, srv *server.Server) {
	t.Helper()
	llm := llmtest.New().Default(llmtest.Text("a reply in several chunks"))
	g := graph.New[convo]()
	g.AddNode("answer", func(ctx context.Context, s convo) (graph.Update[convo], error) {
		resp, err := graph.Generate(ctx, llm, &model.Request{Messages: s.Messages})
		if err != nil {
			return graph.Update[convo]{}, err
		}
		return convoMessages.Set(model.Messages{resp.Message}), nil
	})
	g.AddEdge(graph.START, "answer").AddEdge("answer", graph.END)
	gen, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	values := func(s convo) (json.RawMessage, error) {
		return json.Marshal(map[string]any{"messages": server.EncodeMessages(s.Messages)})
	}
	if err := server.Register(srv, "gen", gen, server.WithCodec(server.Codec[convo]{Values: values})); err != nil {
		t.Fatal(err)
	}
	ag, err := react.New(react.Config{Model: llm, Checkpointer: srv.Checkpointer()})
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "react", ag); err != nil {
		t.Fatal(err)
	}
}
