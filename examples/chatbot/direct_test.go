package chatbot_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// An operator with Capabilities.DirectResponse answers the user itself,
// as the seed's direct_response route says: its direct.response events
// reach the wire, reflection routes to respond without a model call, the
// writer writes no second answer (no response.chunk, one model call for
// the whole turn), and the conversation stores what the operator sent.
// A streamed direct answer (direct.response.start, chunks, done) does the
// same.
func TestDirectResponseSkipsTheWriter(t *testing.T) {
	for _, tc := range []struct {
		name      string
		send      func(context.Context, *operator.Messenger) error
		wantTypes []event.Type
	}{
		{"content", func(ctx context.Context, m *operator.Messenger) error {
			return m.Content(ctx, toolresult.TextContent("Your report is ready: 3 rows."), true)
		}, []event.Type{chatevent.TypeDirectResponse}},
		{"stream", func(ctx context.Context, m *operator.Messenger) error {
			s, err := m.Stream(ctx, "text/plain")
			if err != nil {
				return err
			}
			for _, c := range []string{"Your report ", "is ready: ", "3 rows."} {
				if err := s.Write(ctx, c); err != nil {
					return err
				}
			}
			return s.Close(ctx)
		}, []event.Type{chatevent.TypeDirectResponseStart, chatevent.TypeDirectResponseChunk, chatevent.TypeDirectResponseChunk,
			chatevent.TypeDirectResponseChunk, chatevent.TypeDirectResponseDone}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := llmtest.New(
				llmtest.JSON(supervisor.Decision{Action: supervisor.ActionCallTool, Reasoning: "the reporter answers itself", Tool: "reporter",
					Arguments: map[string]any{"query": "the report"}}),
			)
			upstream := llmtest.NewOpenAIServer(model)
			t.Cleanup(upstream.Close)
			reg := agent.DefaultRegistry()
			if err := agent.RegisterAliases(reg, "haiku=openai:scripted-small,sonnet=openai:scripted"); err != nil {
				t.Fatal(err)
			}
			_, srv := serve(t, chatbot.Config{DataDir: t.TempDir(),
				Agent: &agent.Config{Registry: reg, OpenAI: &provider.OpenAIConfig{BaseURL: upstream.URL + "/v1", APIKey: "test"}},
				RegisterOperators: func(r *operator.Registry) error {
					return r.Register(operator.Metadata{Name: "reporter", Description: "Sends the user their report", Type: operator.PureLLM,
						Capabilities: operator.Capabilities{DirectResponse: true, Streaming: true}},
						func(operator.Deps) (operator.Operator, error) {
							return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
								if err := tc.send(ctx, oc.Messenger); err != nil {
									return nil, err
								}
								return &operator.Result{Output: "report sent"}, nil
							}), nil
						})
				},
			}, 5*time.Second)

			tr := chat(t, srv, "conv-direct", "Send me the report")
			var direct []event.Type
			for _, ty := range tr.types() {
				if slices.Contains([]event.Type{chatevent.TypeDirectResponse, chatevent.TypeDirectResponseStart,
					chatevent.TypeDirectResponseChunk, chatevent.TypeDirectResponseDone}, ty) {
					direct = append(direct, ty)
				}
			}
			if diff := cmp.Diff(tc.wantTypes, direct); diff != "" {
				t.Errorf("direct events (-want +got):\n%s\nall: %v", diff, tr.types())
			}
			if slices.Contains(tr.types(), chatevent.TypeResponseChunk) {
				t.Errorf("the writer wrote a second answer: %q", tr.answer())
			}
			if tr.last() != chatevent.TypeResponseDone {
				t.Errorf("last event %s, want response.done", tr.last())
			}
			if n := len(model.Calls()); n != 1 {
				t.Errorf("%d model calls, want 1 (the decision; no reflection, no writer)", n)
			}
			msgs := history(t, srv, "conv-direct")
			if len(msgs) != 2 || msgs[1].Content != "Your report is ready: 3 rows." {
				t.Errorf("history %+v, want the direct answer stored", msgs)
			}
		})
	}
}
