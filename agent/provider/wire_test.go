package provider_test

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wire is one provider adapter against the llmtest server of its protocol.
type wire struct {
	name   string
	server func(*llmtest.Model) *httptest.Server
	model  func(t *testing.T, url string) *provider.Model
}

var wires = []wire{
	{"openai", llmtest.NewOpenAIServer, func(t *testing.T, url string) *provider.Model {
		m, err := provider.OpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: url + "/v1", Model: "gpt-test"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}},
	{"anthropic", llmtest.NewAnthropicServer, func(t *testing.T, url string) *provider.Model {
		m, err := provider.Anthropic(provider.AnthropicConfig{APIKey: "k", BaseURL: url + "/v1", Model: "claude-sonnet-4-test"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}},
	{"anthropic-direct", llmtest.NewAnthropicServer, func(t *testing.T, url string) *provider.Model {
		m, err := provider.AnthropicDirect(provider.AnthropicConfig{APIKey: "k", BaseURL: url + "/v1", Model: "claude-test"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}},
}

func start(t *testing.T, w wire, replies ...llmtest.Reply) (*llmtest.Model, *provider.Model) {
	t.Helper()
	script := llmtest.New(replies...)
	srv := w.server(script)
	t.Cleanup(srv.Close)
	return script, w.model(t, srv.URL)
}

var weatherTool = model.ToolDef{Name: "get_weather", Description: "Weather of a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

// collect drains a stream, returning its chunks (the final one included)
// and the final response.
func collect(t *testing.T, m model.Model, req *model.Request) ([]model.Chunk, *model.Response) {
	t.Helper()
	var chunks []model.Chunk
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		chunks = append(chunks, c)
	}
	if len(chunks) == 0 || chunks[len(chunks)-1].Kind != model.ChunkDone {
		t.Fatalf("stream of %d chunks ends without ChunkDone", len(chunks))
	}
	return chunks, chunks[len(chunks)-1].Response
}

// TestWireToolRoundTrip runs a native tool loop through langchaingo's real
// clients: the model calls get_weather, the tool result goes back, the
// model answers; usage is normalised on the way.
func TestWireToolRoundTrip(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			usage := model.Usage{InputTokens: 20, OutputTokens: 5}
			script, m := start(t, w,
				llmtest.Reply{ToolCalls: []model.ToolCall{llmtest.ToolCall("call_1", "get_weather", `{"city":"Paris"}`)}, Usage: usage},
				llmtest.Reply{Text: "It is sunny in Paris.", Usage: usage})
			req := &model.Request{Messages: []model.Message{model.System("You report weather."), model.User("Weather in Paris?")},
				Tools: []model.ToolDef{weatherTool}}
			resp, err := m.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			calls := resp.ToolCalls()
			if len(calls) != 1 || calls[0].ID != "call_1" || calls[0].Name != "get_weather" || !jsonEqual(calls[0].Arguments, `{"city":"Paris"}`) {
				t.Fatalf("tool calls = %+v", calls)
			}
			if resp.FinishReason != model.FinishToolCalls || resp.Usage != usage {
				t.Errorf("finish %q usage %+v; want tool_calls, %+v", resp.FinishReason, resp.Usage, usage)
			}
			req.Messages = append(req.Messages, resp.Message, model.ToolResults(model.ToolResult{CallID: "call_1", Name: "get_weather",
				Content: []model.Part{model.TextPart("sunny, 24°C")}}))
			resp, err = m.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text() != "It is sunny in Paris." || resp.FinishReason != model.FinishStop {
				t.Errorf("answer %q (%s)", resp.Text(), resp.FinishReason)
			}
			got := script.Calls()
			if len(got) != 2 {
				t.Fatalf("server saw %d calls", len(got))
			}
			first := got[0].Request
			if len(first.Tools) != 1 || first.Tools[0].Name != "get_weather" || !jsonEqual(first.Tools[0].Parameters, string(weatherTool.Parameters)) {
				t.Errorf("tools on the wire = %+v", first.Tools)
			}
			second := got[1].Request.Messages
			if len(second) != 4 {
				t.Fatalf("second request has %d messages, want system, user, assistant, tool: %+v", len(second), second)
			}
			sent := second[2].ToolCalls()
			if second[2].Role != model.RoleAssistant || len(sent) != 1 || sent[0].ID != "call_1" || !jsonEqual(sent[0].Arguments, `{"city":"Paris"}`) {
				t.Errorf("assistant message sent back = %+v", second[2])
			}
			if second[3].Role != model.RoleTool || second[3].Parts[0].ToolResult.CallID != "call_1" ||
				second[3].Parts[0].ToolResult.Text() != "sunny, 24°C" {
				t.Errorf("tool result sent = %+v", second[3])
			}
		})
	}
}

// TestWireParallelToolCalls streams a turn with two tool calls: each comes
// as tool-call chunks of its own index, none as text, and the final
// response holds both in order.
func TestWireParallelToolCalls(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			script, m := start(t, w, llmtest.Reply{ToolCalls: []model.ToolCall{
				llmtest.ToolCall("call_p", "get_weather", `{"city":"Paris"}`),
				llmtest.ToolCall("call_r", "get_weather", `{"city":"Rome"}`),
			}, Usage: model.Usage{InputTokens: 9, OutputTokens: 4}}, llmtest.Text("Sunny in both."))
			req := &model.Request{Messages: []model.Message{model.User("Paris and Rome?")}, Tools: []model.ToolDef{weatherTool}}
			chunks, resp := collect(t, m, req)
			args := map[int]string{}
			ids := map[int]string{}
			for _, c := range chunks[:len(chunks)-1] {
				if c.Kind != model.ChunkToolCall {
					t.Errorf("chunk of kind %s (%q) in a tool-only turn", c.Kind, c.Text)
					continue
				}
				args[c.ToolCall.Index] += c.ToolCall.Arguments
				if c.ToolCall.ID != "" {
					ids[c.ToolCall.Index] = c.ToolCall.ID
				}
			}
			if diff := cmp.Diff(map[int]string{0: "call_p", 1: "call_r"}, ids); diff != "" {
				t.Errorf("streamed call ids (-want +got):\n%s", diff)
			}
			if !jsonEqual([]byte(args[0]), `{"city":"Paris"}`) || !jsonEqual([]byte(args[1]), `{"city":"Rome"}`) {
				t.Errorf("streamed arguments = %v", args)
			}
			calls := resp.ToolCalls()
			if len(calls) != 2 || calls[0].ID != "call_p" || calls[1].ID != "call_r" || !jsonEqual(calls[1].Arguments, `{"city":"Rome"}`) {
				t.Errorf("final tool calls = %+v", calls)
			}
			if resp.Text() != "" || resp.Usage != (model.Usage{InputTokens: 9, OutputTokens: 4}) {
				t.Errorf("final text %q usage %+v", resp.Text(), resp.Usage)
			}
			// Both results go back in one turn.
			req.Messages = append(req.Messages, resp.Message, model.ToolResults(
				model.ToolResult{CallID: "call_p", Name: "get_weather", Content: []model.Part{model.TextPart("sunny")}},
				model.ToolResult{CallID: "call_r", Name: "get_weather", Content: []model.Part{model.TextPart("sunny too")}}))
			answer, err := m.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			sent := script.Calls()[1].Request.Messages
			if answer.Text() != "Sunny in both." || len(sent) != 3 || len(sent[1].ToolCalls()) != 2 || sent[2].Role != model.RoleTool ||
				len(sent[2].Parts) != 2 || sent[2].Parts[1].ToolResult.CallID != "call_r" || sent[2].Parts[1].ToolResult.Text() != "sunny too" {
				t.Errorf("answer %q; second request = %+v", answer.Text(), sent)
			}
		})
	}
}

// TestWireStreamedToolCallNeverText streams a turn with text and a tool
// call: the text chunks hold the text alone, never the call's JSON.
func TestWireStreamedToolCallNeverText(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			_, m := start(t, w, llmtest.Reply{Text: "Let me check.",
				ToolCalls: []model.ToolCall{llmtest.ToolCall("call_1", "get_weather", `{"city":"Paris"}`)}})
			chunks, resp := collect(t, m, &model.Request{Messages: []model.Message{model.User("Weather?")}, Tools: []model.ToolDef{weatherTool}})
			var text, args strings.Builder
			for _, c := range chunks {
				switch c.Kind {
				case model.ChunkText:
					text.WriteString(c.Text)
				case model.ChunkToolCall:
					args.WriteString(c.ToolCall.Arguments)
				case model.ChunkThinking:
					t.Errorf("thinking chunk %q in a turn without thinking", c.Text)
				}
			}
			if text.String() != "Let me check." || resp.Text() != "Let me check." {
				t.Errorf("streamed text %q, final text %q; want the text alone", text.String(), resp.Text())
			}
			if !jsonEqual([]byte(args.String()), `{"city":"Paris"}`) || len(resp.ToolCalls()) != 1 {
				t.Errorf("streamed arguments %q, final calls %+v", args.String(), resp.ToolCalls())
			}
		})
	}
}

// TestWireThinkingApart keeps thinking apart from the answer, plain and
// streamed; Anthropic's signature survives a plain call.
func TestWireThinkingApart(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			reply := llmtest.Reply{Thinking: "The user greets me.", Text: "Hello!", Usage: model.Usage{InputTokens: 4, OutputTokens: 9}}
			script, m := start(t, w, reply, reply)
			req := &model.Request{Messages: []model.Message{model.User("hi")}, Thinking: &model.Thinking{Budget: 2048}, MaxTokens: 100}
			resp, err := m.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text() != "Hello!" || resp.Message.Thinking() != "The user greets me." {
				t.Errorf("text %q thinking %q", resp.Text(), resp.Message.Thinking())
			}
			if strings.HasPrefix(w.name, "anthropic") {
				if p := resp.Message.Parts[0]; p.Kind != model.PartThinking || p.Signature != llmtest.Signature {
					t.Errorf("first part = %+v, want thinking signed %q", p, llmtest.Signature)
				}
				if th := script.Calls()[0].Request.Thinking; th == nil || th.Budget != 2048 {
					t.Errorf("thinking on the wire = %+v, want budget 2048", th)
				}
			}
			chunks, final := collect(t, m, req)
			var text, thinking string
			for _, c := range chunks {
				switch c.Kind {
				case model.ChunkText:
					text += c.Text
				case model.ChunkThinking:
					thinking += c.Text
				}
			}
			if text != "Hello!" || thinking != "The user greets me." {
				t.Errorf("streamed text %q thinking %q", text, thinking)
			}
			if final.Text() != "Hello!" || final.Message.Thinking() != "The user greets me." {
				t.Errorf("final text %q thinking %q", final.Text(), final.Message.Thinking())
			}
			if final.Usage.Total() != 13 {
				t.Errorf("streamed usage = %+v, want 13 tokens", final.Usage)
			}
		})
	}
}

// TestWireOpenAIRequestOptions checks that a request's settings reach the
// OpenAI wire.
func TestWireOpenAIRequestOptions(t *testing.T) {
	script, m := start(t, wires[0], llmtest.Text(`{"ok":true}`))
	temp := 0.2
	_, err := m.Generate(context.Background(), &model.Request{Model: "gpt-other",
		Messages: []model.Message{model.User("json please")}, Temperature: &temp, MaxTokens: 77, Stop: []string{"END"},
		ResponseFormat: &model.ResponseFormat{}, Tools: []model.ToolDef{weatherTool},
		ToolChoice: model.ToolChoice{Mode: model.ToolNamed, Name: "get_weather"}})
	if err != nil {
		t.Fatal(err)
	}
	got := script.Calls()[0].Request
	if got.Model != "gpt-other" || got.Temperature == nil || *got.Temperature != 0.2 || got.MaxTokens != 77 ||
		!cmp.Equal(got.Stop, []string{"END"}) || got.ResponseFormat == nil ||
		got.ToolChoice != (model.ToolChoice{Mode: model.ToolNamed, Name: "get_weather"}) {
		t.Errorf("request on the wire = %+v", got)
	}
}

// TestWireErrors: a provider error ends Generate and Stream with an error
// naming the provider and model; a cancelled context ends them with its
// error.
func TestWireErrors(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			_, m := start(t, w, llmtest.Transient(), llmtest.Transient(), llmtest.Hang())
			req := &model.Request{Messages: []model.Message{model.User("hi")}}
			if _, err := m.Generate(context.Background(), req); err == nil || !strings.Contains(err.Error(), "provider "+m.Provider()+":") {
				t.Errorf("Generate err = %v", err)
			}
			if _, err := model.Collect(m.Stream(context.Background(), req)); err == nil || !strings.Contains(err.Error(), "503") {
				t.Errorf("Stream err = %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := model.Collect(m.Stream(ctx, req)); err != context.Canceled {
				t.Errorf("cancelled Stream err = %v", err)
			}
		})
	}
}

func jsonEqual(got []byte, want string) bool {
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	return cmp.Equal(a, b)
}

// TestWireOpenAIStructuredOutputs: with StructuredOutputs a request's schema
// reaches the wire as response_format json_schema; without, JSON mode.
func TestWireOpenAIStructuredOutputs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)
	for _, on := range []bool{false, true} {
		script := llmtest.New(llmtest.Text(`{"ok":true}`), llmtest.Text(`{"ok":true}`))
		srv := llmtest.NewOpenAIServer(script)
		m, err := provider.OpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: srv.URL + "/v1", StructuredOutputs: on})
		if err != nil {
			t.Fatal(err)
		}
		req := &model.Request{Messages: []model.Message{model.User("ok?")}, ResponseFormat: &model.ResponseFormat{Name: "verdict", Schema: schema}}
		if _, err := m.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if _, err := model.Collect(m.Stream(context.Background(), req)); err != nil {
			t.Fatal(err)
		}
		srv.Close()
		for i, c := range script.Calls() {
			rf := c.Request.ResponseFormat
			switch {
			case rf == nil:
				t.Errorf("structured outputs %v, call %d: no response format on the wire", on, i)
			case on && (rf.Name != "verdict" || !jsonEqual(rf.Schema, string(schema))):
				t.Errorf("structured outputs on, call %d: response format %q %s, want verdict with the schema", i, rf.Name, rf.Schema)
			case !on && rf.Schema != nil:
				t.Errorf("structured outputs off, call %d: schema %s sent, want JSON mode", i, rf.Schema)
			}
		}
	}
}

// toolDeltas is a model whose stream is these tool-call pieces, then the
// end of a turn that calls tools.
type toolDeltas []model.ToolCallDelta

func (toolDeltas) Generate(context.Context, *model.Request) (*model.Response, error) {
	return nil, nil
}

func (ds toolDeltas) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for _, d := range ds {
			if !yield(model.Chunk{Kind: model.ChunkToolCall, ToolCall: &d}, nil) {
				return
			}
		}
		yield(model.Chunk{Kind: model.ChunkDone, Response: &model.Response{FinishReason: model.FinishToolCalls}}, nil)
	}
}

// checkStreamedCalls streams ds through the OpenAI wire and checks that two
// calls arrive, call_a to fa and call_b to fb with the arguments want gives
// their indexes: in the chunks and in the response.
func checkStreamedCalls(t *testing.T, ds toolDeltas, want map[int]string) {
	t.Helper()
	_, m := start(t, wires[0], llmtest.From(ds))
	req := &model.Request{Messages: []model.Message{model.User("go")}, Tools: []model.ToolDef{weatherTool}}
	args := map[int]string{}
	ids := map[int]string{}
	var resp *model.Response
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		switch c.Kind {
		case model.ChunkToolCall:
			args[c.ToolCall.Index] += c.ToolCall.Arguments
			if c.ToolCall.ID != "" {
				ids[c.ToolCall.Index] = c.ToolCall.ID
			}
		case model.ChunkDone:
			resp = c.Response
		}
	}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Fatalf("streamed arguments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[int]string{0: "call_a", 1: "call_b"}, ids); diff != "" {
		t.Fatalf("streamed ids (-want +got):\n%s", diff)
	}
	if resp == nil {
		t.Fatal("no ChunkDone")
	}
	calls := resp.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "call_a" || calls[0].Name != "fa" || string(calls[0].Arguments) != want[0] ||
		calls[1].ID != "call_b" || calls[1].Name != "fb" || string(calls[1].Arguments) != want[1] {
		t.Fatalf("the response's calls: %+v", calls)
	}
}

// The pieces of streamed tool calls are assembled by the index the wire
// gives them, also when the calls' pieces interleave (as OpenAI's protocol
// allows: each piece names its call by index): in the chunks and in the
// response.
func TestOpenAIInterleavedToolCalls(t *testing.T) {
	checkStreamedCalls(t, toolDeltas{
		{Index: 0, ID: "call_a", Name: "fa"},
		{Index: 1, ID: "call_b", Name: "fb"},
		{Index: 0, Arguments: `{"x":`},
		{Index: 1, Arguments: `{"y":`},
		{Index: 0, Arguments: `{"z":1}}`},
		{Index: 1, Arguments: `2}`},
	}, map[int]string{0: `{"x":{"z":1}}`, 1: `{"y":2}`})
}

// Calls streamed whole at one index, each with its own id (the shape of
// Ollama's OpenAI-compatible API: every call in one piece, all at the index
// 0), are separate calls, in the chunks and in the response.
func TestOpenAIToolCallsSharingAnIndex(t *testing.T) {
	checkStreamedCalls(t, toolDeltas{
		{Index: 0, ID: "call_a", Name: "fa", Arguments: `{"x":1}`},
		{Index: 0, ID: "call_b", Name: "fb", Arguments: `{"y":2}`},
	}, map[int]string{0: `{"x":1}`, 1: `{"y":2}`})
}

// A server whose tool-call lines are long, one with '<', '>' and '&' (which
// a server need not escape) and one that marking would make longer than
// langchaingo reads: both calls arrive whole, as written.
func TestOpenAILongToolCallLines(t *testing.T) {
	line := func(index int, id, args string) string {
		var buf strings.Builder
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(args)
		b := strings.TrimSuffix(buf.String(), "\n")
		return `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":` +
			string(rune('0'+index)) + `,"id":"` + id + `","type":"function","function":{"name":"f","arguments":` + b + `}}]}}]}` + "\n"
	}
	html := `{"q":"` + strings.Repeat("<&>", 4000) + `"}`
	const limit = 64 << 10 // langchaingo's longest line
	pad := limit - len(line(1, "call_b", `{"q":""}`))
	padded := `{"q":"` + strings.Repeat("y", pad) + `"}`
	if n := len(line(1, "call_b", padded)); n != limit {
		t.Fatalf("the second line is %d bytes, want %d", n, limit)
	}
	body := line(0, "call_a", html) + "\n" + line(1, "call_b", padded) + "\n" +
		`data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
		"data: [DONE]\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	m, err := provider.OpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: srv.URL + "/v1", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	req := &model.Request{Messages: []model.Message{model.User("go")}, Tools: []model.ToolDef{weatherTool}}
	var resp *model.Response
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		if c.Kind == model.ChunkDone {
			resp = c.Response
		}
	}
	if resp == nil {
		t.Fatal("no ChunkDone")
	}
	calls := resp.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "call_a" || string(calls[0].Arguments) != html ||
		calls[1].ID != "call_b" || string(calls[1].Arguments) != padded {
		t.Fatalf("%d calls: %.300v", len(calls), calls)
	}
}
