package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
)

// hostile starts a server that answers every request with status 200,
// Content-Type text/event-stream and the body write writes, and returns
// its URL.
func hostile(t testing.TB, write func(w io.Writer)) string {
	t.Helper()
	return hostileAs(t, http.StatusOK, "text/event-stream", write)
}

// hostileAs starts a server that answers every request with status,
// Content-Type contentType and the body write writes, and returns its URL.
func hostileAs(t testing.TB, status int, contentType string, write func(w io.Writer)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		write(w)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// lines returns a writer of the given SSE data lines.
func lines(data ...string) func(w io.Writer) {
	return func(w io.Writer) {
		for _, d := range data {
			fmt.Fprintf(w, "data: %s\n\n", d)
		}
	}
}

func hiRequest() *model.Request {
	return &model.Request{Messages: []model.Message{model.User("hi")}}
}

// streamErr drains a stream and returns its error, failing the test when it
// ends without one.
func streamErr(t *testing.T, m model.Model) error {
	t.Helper()
	for _, err := range m.Stream(context.Background(), hiRequest()) {
		if err != nil {
			return err
		}
	}
	t.Fatal("the stream ended without an error")
	return nil
}

func anthropicDirect(t *testing.T, url string, capBytes int64) *provider.Model {
	t.Helper()
	m, err := provider.AnthropicDirect(provider.AnthropicConfig{APIKey: "k", BaseURL: url, MaxReplyBytes: capBytes})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const aStart = `{"type":"message_start","message":{"id":"msg_1","model":"claude-test","usage":{"input_tokens":3}}}`

// TestAnthropicDirectStreamBadBlockIndexes: block indexes a server chooses
// (negative, out of order, with gaps, huge) fail the stream with a
// "reading the stream" error; none panics or sizes an allocation.
func TestAnthropicDirectStreamBadBlockIndexes(t *testing.T) {
	textStart := func(i int) string {
		return fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i)
	}
	textDelta := func(i int) string {
		return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":"x"}}`, i)
	}
	for name, events := range map[string][]string{
		"negative start":      {aStart, textStart(-1)},
		"gap before start":    {aStart, textStart(1), textDelta(0)},
		"huge start":          {aStart, textStart(100000000)},
		"start twice":         {aStart, textStart(0), textStart(0)},
		"delta of no block":   {aStart, textStart(0), textDelta(1)},
		"negative delta":      {aStart, textStart(0), textDelta(-1)},
		"delta before blocks": {aStart, textDelta(0)},
	} {
		t.Run(name, func(t *testing.T) {
			m := anthropicDirect(t, hostile(t, lines(events...)), 0)
			err := streamErr(t, m)
			if !strings.Contains(err.Error(), "reading the stream: content_block_") {
				t.Errorf("err = %v, want a reading-the-stream error naming the event", err)
			}
		})
	}
}

// TestAnthropicDirectStreamManyDeltas: a reply of many small deltas is
// assembled whole (linearly: see BenchmarkStreamManyDeltas).
func TestAnthropicDirectStreamManyDeltas(t *testing.T) {
	const n = 2000
	events := []string{aStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"t"}}`}
	for range n {
		events = append(events, `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"ab"}}`)
	}
	events = append(events, `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s1"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s2"}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"<"}}`)
	for range n {
		events = append(events, `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"abcd"}}`)
	}
	events = append(events, `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":-5}}`,
		`{"type":"message_stop"}`)
	m := anthropicDirect(t, hostile(t, lines(events...)), 0)
	_, resp := collect(t, m, hiRequest())
	want := []model.Part{model.ThinkingPart("t"+strings.Repeat("ab", n), "s1s2"), model.TextPart("<" + strings.Repeat("abcd", n))}
	if len(resp.Message.Parts) != 2 || resp.Message.Parts[0].Text != want[0].Text || resp.Message.Parts[0].Signature != "s1s2" ||
		resp.Message.Parts[1].Text != want[1].Text {
		t.Errorf("parts = %.200v, want thinking and text of %d deltas each", resp.Message.Parts, n)
	}
	if resp.Usage != (model.Usage{InputTokens: 3}) {
		t.Errorf("usage = %+v, want the negative output count as zero", resp.Usage)
	}
}

// endless writes text deltas until the client goes away.
func endless(event string) func(w io.Writer) {
	return func(w io.Writer) {
		line := []byte("data: " + event + "\n\n")
		for {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}
}

// TestReplyCap: a reply over MaxReplyBytes, streamed without end or not
// streamed, fails the call with ErrReplyTooLarge naming the option, on
// every adapter.
func TestReplyCap(t *testing.T) {
	const capBytes = 64 << 10
	big := func(w io.Writer) { // a non-streamed reply with a text of 1 MiB
		fmt.Fprintf(w, `{"id":"x","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":%q}],`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":%[1]q}}]}`, strings.Repeat("a", 1<<20))
	}
	aDelta := `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"abcd"}}`
	oDelta := `{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"abcd"}}]}`
	aStream := func(w io.Writer) {
		lines(aStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)(w)
		endless(aDelta)(w)
	}
	for _, tt := range []struct {
		name, field string
		build       func(url string) (*provider.Model, error)
		stream      func(w io.Writer)
	}{
		{"anthropic-direct", "AnthropicConfig.MaxReplyBytes", func(url string) (*provider.Model, error) {
			return provider.AnthropicDirect(provider.AnthropicConfig{APIKey: "k", BaseURL: url, MaxReplyBytes: capBytes})
		}, aStream},
		{"anthropic", "AnthropicConfig.MaxReplyBytes", func(url string) (*provider.Model, error) {
			return provider.Anthropic(provider.AnthropicConfig{APIKey: "k", BaseURL: url, MaxReplyBytes: capBytes})
		}, aStream},
		{"openai", "OpenAIConfig.MaxReplyBytes", func(url string) (*provider.Model, error) {
			return provider.OpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: url, MaxReplyBytes: capBytes})
		}, endless(oDelta)},
		{"ollama", "OllamaConfig.MaxReplyBytes", func(url string) (*provider.Model, error) {
			return provider.Ollama(provider.OllamaConfig{Host: strings.TrimSuffix(url, "/v1"), MaxReplyBytes: capBytes})
		}, endless(oDelta)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, provider.ErrReplyTooLarge) || !strings.Contains(err.Error(), tt.field) {
					t.Errorf("%s: err = %v, want ErrReplyTooLarge naming %s", what, err, tt.field)
				}
			}
			m, err := tt.build(hostile(t, tt.stream) + "/v1")
			if err != nil {
				t.Fatal(err)
			}
			check("stream", streamErr(t, m))
			m, err = tt.build(hostile(t, big) + "/v1")
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Generate(context.Background(), hiRequest())
			check("generate", err)
		})
	}
}

func TestReplyCapNegative(t *testing.T) {
	_, err := provider.OpenAI(provider.OpenAIConfig{APIKey: "k", MaxReplyBytes: -1})
	if err == nil || !strings.Contains(err.Error(), "OpenAIConfig.MaxReplyBytes") {
		t.Errorf("err = %v, want one naming OpenAIConfig.MaxReplyBytes", err)
	}
}

func openAIModel(t *testing.T, url string) *provider.Model {
	t.Helper()
	m, err := provider.OpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: url + "/v1", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOpenAIStreamLongLines: lines far over 64 KiB (a tool call sent whole,
// as Ollama's OpenAI API does, and a long text piece) arrive whole.
func TestOpenAIStreamLongLines(t *testing.T) {
	args := `{"q":"` + strings.Repeat("x", 1<<20) + `"}`
	long := strings.Repeat("y", 1<<20)
	m := openAIModel(t, hostile(t, lines(
		fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q}}]}`, long),
		fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":%q}}]}}]}`, args),
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":-3,"prompt_tokens_details":{"cached_tokens":1e30}}}`,
		`[DONE]`)))
	_, resp := collect(t, m, hiRequest())
	calls := resp.ToolCalls()
	if resp.Text() != long || len(calls) != 1 || string(calls[0].Arguments) != args || resp.FinishReason != model.FinishToolCalls {
		t.Errorf("text of %d bytes, %d calls, finish %s: want the long text and call whole", len(resp.Text()), len(calls), resp.FinishReason)
	}
	if resp.Usage != (model.Usage{CacheReadTokens: 7}) {
		t.Errorf("usage = %+v, want clamped figures", resp.Usage)
	}
}

// TestOpenAIStreamManyDeltas: many small pieces of text, thinking and
// interleaved tool calls (some at hostile indexes) are assembled whole.
func TestOpenAIStreamManyDeltas(t *testing.T) {
	const n = 2000
	events := []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-7,"id":"call_a","type":"function","function":{"name":"fa","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1000000000,"id":"call_b","type":"function","function":{"name":"fb","arguments":""}}]}}]}`,
	}
	for range n {
		events = append(events, `{"choices":[{"index":0,"delta":{"reasoning_content":"r","content":"ab"}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-7,"function":{"arguments":"1"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1000000000,"function":{"arguments":"2"}}]}}]}`,
			`{"choices":[{"index":1,"delta":{"content":"other choice"}}]}`, `not json`)
	}
	m := openAIModel(t, hostile(t, lines(append(events, `[DONE]`)...)))
	chunks, resp := collect(t, m, hiRequest())
	var text strings.Builder
	for _, c := range chunks {
		if c.Kind == model.ChunkText {
			text.WriteString(c.Text)
		}
	}
	calls := resp.ToolCalls()
	if text.String() != strings.Repeat("ab", n) || resp.Text() != text.String() || resp.Message.Parts[0].Text != strings.Repeat("r", n) ||
		len(calls) != 2 || calls[0].ID != "call_a" || string(calls[0].Arguments) != strings.Repeat("1", n) ||
		calls[1].ID != "call_b" || string(calls[1].Arguments) != strings.Repeat("2", n) {
		t.Errorf("response %.300v", resp.Message.Parts)
	}
}

// TestOpenAIStreamErrorEvent: an error event of the server fails the call
// with its message.
func TestOpenAIStreamErrorEvent(t *testing.T) {
	m := openAIModel(t, hostile(t, lines(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`,
		`{"error":{"type":"server_error","message":"the model crashed"}}`)))
	if err := streamErr(t, m); !strings.Contains(err.Error(), "the model crashed") {
		t.Errorf("err = %v, want the server's message", err)
	}
}

// TestAnthropicDirectStreamLongLine: a line over 8 MiB (the reader's old
// line limit) is read when the reply cap allows it.
func TestAnthropicDirectStreamLongLine(t *testing.T) {
	long := strings.Repeat("x", 9<<20)
	m := anthropicDirect(t, hostile(t, lines(aStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, long),
		`{"type":"message_stop"}`)), 0)
	_, resp := collect(t, m, hiRequest())
	if resp.Text() != long {
		t.Errorf("text of %d bytes, want %d", len(resp.Text()), len(long))
	}
}
