package react_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator"
)

// In a run streamed with graph.StreamMessages, every reply the state holds
// has the id its chunks were streamed under, whether it calls tools or
// answers in text, so that a client finds in the state the reply it
// streamed instead of showing it twice.
func TestStreamedReplyKeepsChunkID(t *testing.T) {
	script := llmtest.New(
		llmtest.Reply{ToolCalls: []model.ToolCall{llmtest.ToolCall("call_p", "get_weather", `{"city":"Paris"}`)}},
		llmtest.Reply{Text: "It is 18 C in Paris."},
	)
	ag, err := react.New(react.Config{Model: script, Tools: []operator.Tool{weatherTool()},
		Checkpointer: checkpoint.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	var streamed []string // the ids chunks were streamed under, in order
	var s react.State
	for ev, err := range ag.Stream(onThread("streamids"), react.Input("How warm is Paris?"), graph.WithModes(graph.StreamMessages, graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := ev.Chunk(); ok {
			if c.MessageID == "" {
				t.Fatalf("chunk %+v without a message id", c)
			}
			if n := len(streamed); n == 0 || streamed[n-1] != c.MessageID {
				streamed = append(streamed, c.MessageID)
			}
		}
		if ev.Mode == graph.StreamValues {
			s = ev.State
		}
	}
	var replies []string
	for _, m := range s.Messages {
		if m.Role == model.RoleAssistant {
			replies = append(replies, m.ID)
		}
	}
	if len(streamed) != 2 || len(replies) != 2 {
		t.Fatalf("streamed ids %q, assistant ids in the state %q: want two of each", streamed, replies)
	}
	for i, what := range []string{"tool-call reply", "text reply"} {
		if streamed[i] != replies[i] {
			t.Errorf("%s: streamed under %q, held in the state as %q", what, streamed[i], replies[i])
		}
	}
}
