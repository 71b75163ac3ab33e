package react_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator"
)

type cityArgs struct {
	City string `json:"city" jsonschema:"description=the city" validate:"required"`
}

var temperatures = map[string]int{"Paris": 18, "Rome": 24}

func weatherTool() operator.Tool {
	return operator.MustFuncTool("get_weather", "Current temperature of a city in degrees Celsius.",
		func(_ context.Context, in cityArgs) (int, error) { return temperatures[in.City], nil })
}

// The agent through langchaingo's real OpenAI and Anthropic clients against
// the llmtest wire servers: two parallel tool calls in one turn go out and
// their results come back over the wire, the streamed tool call never shows
// in the answer's text, and usage is counted per run and per thread.
func TestWire(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func(*llmtest.Model) *httptest.Server
		model  func(url string) (*provider.Model, error)
	}{
		{"openai", llmtest.NewOpenAIServer, func(url string) (*provider.Model, error) {
			return provider.OpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: url + "/v1", Model: "gpt-test"})
		}},
		{"anthropic", llmtest.NewAnthropicServer, func(url string) (*provider.Model, error) {
			return provider.Anthropic(provider.AnthropicConfig{APIKey: "k", BaseURL: url + "/v1", Model: "claude-test"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u1 := model.Usage{InputTokens: 50, OutputTokens: 20}
			u2 := model.Usage{InputTokens: 90, OutputTokens: 7}
			u3 := model.Usage{InputTokens: 120, OutputTokens: 4}
			script := llmtest.New(
				llmtest.Reply{Usage: u1, ToolCalls: []model.ToolCall{
					llmtest.ToolCall("call_p", "get_weather", `{"city":"Paris"}`),
					llmtest.ToolCall("call_r", "get_weather", `{"city":"Rome"}`),
				}},
				llmtest.Reply{Text: "Rome is warmer than Paris.", Usage: u2},
				llmtest.Reply{Text: "You asked about Paris and Rome.", Usage: u3},
			)
			srv := tc.server(script)
			defer srv.Close()
			m, err := tc.model(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{weatherTool()},
				Instructions: "Answer with the tools.", Checkpointer: checkpoint.NewMemory()})
			if err != nil {
				t.Fatal(err)
			}
			ctx := onThread("wire")
			var text strings.Builder
			toolChunks := 0
			var s react.State
			for ev, err := range ag.Stream(ctx, react.Input("Is Paris or Rome warmer?"), graph.WithModes(graph.StreamMessages, graph.StreamValues)) {
				if err != nil {
					t.Fatal(err)
				}
				if c, ok := ev.Chunk(); ok {
					if ev.Node != react.NodeModel {
						t.Fatalf("chunk from node %q", ev.Node)
					}
					switch c.Kind {
					case model.ChunkText:
						text.WriteString(c.Text)
					case model.ChunkToolCall:
						toolChunks++
					}
				}
				if ev.Mode == graph.StreamValues {
					s = ev.State
				}
			}
			if got := text.String(); got != "Rome is warmer than Paris." {
				t.Fatalf("streamed text %q: tool calls must never appear as text", got)
			}
			if toolChunks == 0 {
				t.Fatal("no tool-call chunks streamed")
			}
			if s.Reply() != "Rome is warmer than Paris." || s.Outcome != react.OutcomeAnswered {
				t.Fatalf("reply %q (%s)", s.Reply(), s.Outcome)
			}
			calls := script.Calls()
			if len(calls) != 2 {
				t.Fatalf("%d model calls", len(calls))
			}
			// The second request carried both results, in call order, over
			// the wire.
			var got []string
			for _, msg := range calls[1].Request.Messages {
				for _, p := range msg.Parts {
					if p.ToolResult != nil {
						got = append(got, p.ToolResult.CallID+"="+p.ToolResult.Text())
					}
				}
			}
			if strings.Join(got, " ") != "call_p=18 call_r=24" {
				t.Fatalf("results sent %q", got)
			}
			if defs := calls[0].Request.Tools; len(defs) != 1 || defs[0].Name != "get_weather" || !strings.Contains(string(defs[0].Parameters), `"city"`) {
				t.Fatalf("tools sent %+v", defs)
			}
			if want := u1.Merge(u2); s.RunUsage != want || s.Usage != want {
				t.Fatalf("usage %+v, run %+v, want %+v", s.Usage, s.RunUsage, want)
			}
			// The next run on the thread: the model sees the whole
			// conversation; run usage is this run's, thread usage all.
			s, err = ag.Invoke(ctx, react.Input("Which cities?"))
			if err != nil {
				t.Fatal(err)
			}
			if s.RunUsage != u3 || s.Usage != u1.Merge(u2).Merge(u3) {
				t.Fatalf("second run: usage %+v, run %+v", s.Usage, s.RunUsage)
			}
			if n := len(script.Calls()[2].Request.Messages); n < 6 {
				t.Fatalf("the second run's request has %d messages, not the conversation", n)
			}
		})
	}
}

// A server that answers every call with the same reply id (llmtest's
// Anthropic server always says "msg_llmtest", as a caching proxy might)
// must not make a reply replace an earlier message: every message of the
// conversation keeps a conversation-unique id, across the runs of a
// checkpointed thread, whether the replies are streamed or not.
func TestRepeatedReplyIDs(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "generate", true: "stream"}[stream], func(t *testing.T) {
			script := llmtest.New(
				llmtest.Reply{Text: "Checking.", ToolCalls: []model.ToolCall{llmtest.ToolCall("toolu_1", "get_weather", `{"city":"Paris"}`)}},
				llmtest.Text("It is 18 C in Paris."),
				llmtest.Reply{Text: "Checking.", ToolCalls: []model.ToolCall{llmtest.ToolCall("toolu_1", "get_weather", `{"city":"Rome"}`)}},
				llmtest.Text("It is 24 C in Rome."),
			)
			srv := llmtest.NewAnthropicServer(script)
			defer srv.Close()
			m, err := provider.AnthropicDirect(provider.AnthropicConfig{APIKey: "k", BaseURL: srv.URL + "/v1"})
			if err != nil {
				t.Fatal(err)
			}
			ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{weatherTool()}, Checkpointer: checkpoint.NewMemory()})
			if err != nil {
				t.Fatal(err)
			}
			ctx := onThread("repeated-ids")
			run := func(q string) react.State {
				t.Helper()
				if !stream {
					s, err := ag.Invoke(ctx, react.Input(q))
					if err != nil {
						t.Fatal(err)
					}
					return s
				}
				var s react.State
				for ev, err := range ag.Stream(ctx, react.Input(q), graph.WithModes(graph.StreamMessages, graph.StreamValues)) {
					if err != nil {
						t.Fatal(err)
					}
					if ev.Mode == graph.StreamValues {
						s = ev.State
					}
				}
				return s
			}
			s := run("How warm is Paris?")
			if s.Reply() != "It is 18 C in Paris." || s.Outcome != react.OutcomeAnswered {
				t.Fatalf("first run: reply %q (%s)", s.Reply(), s.Outcome)
			}
			s = run("And Rome?")
			if s.Reply() != "It is 24 C in Rome." || s.Outcome != react.OutcomeAnswered {
				t.Fatalf("second run: reply %q (%s)", s.Reply(), s.Outcome)
			}
			want := []model.Role{model.RoleUser, model.RoleAssistant, model.RoleTool, model.RoleAssistant}
			want = append(want, want...)
			var roles []model.Role
			seen := map[string]bool{}
			for _, msg := range s.Messages {
				roles = append(roles, msg.Role)
				if msg.ID == "" || seen[msg.ID] || msg.ID == "msg_llmtest" {
					t.Errorf("message id %q: empty, repeated or the provider's", msg.ID)
				}
				seen[msg.ID] = true
			}
			if !slices.Equal(roles, want) {
				t.Fatalf("conversation roles %v, want %v", roles, want)
			}
			// Each tool result follows the call it answers.
			for i, msg := range s.Messages {
				if msg.Role == model.RoleTool && len(s.Messages[i-1].ToolCalls()) != 1 {
					t.Fatalf("tool result %d follows %+v, not its call", i, s.Messages[i-1])
				}
			}
		})
	}
}
