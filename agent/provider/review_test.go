package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/resilience"
)

// text writes s whole.
func text(s string) func(w io.Writer) {
	return func(w io.Writer) { _, _ = io.WriteString(w, s) }
}

// chunkText returns the text of the chunks of kind k.
func chunkText(chunks []model.Chunk, k model.ChunkKind) string {
	var b strings.Builder
	for _, c := range chunks {
		if c.Kind == k {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// TestOpenAIStreamBodyDecides: a streamed request answered with a whole
// chat.completion or with events is read by its body, whatever its
// Content-Type says; the parts of either arrive as chunks, and the reply's
// "id" is the response's ID (the first chunk of the events has none).
func TestOpenAIStreamBodyDecides(t *testing.T) {
	whole := ` {"id":"chatcmpl-7","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant",` +
		`"content":"hello","reasoning_content":"hmm","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},` +
		`"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`
	events := "data: " + `{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}` + "\n\n" +
		"data: " + `{"id":"chatcmpl-7","choices":[{"index":0,"delta":{"content":"hel"}}]}` + "\n\n" +
		"data: " + `{"id":"chatcmpl-7","choices":[{"index":0,"delta":{"content":"lo"}}]}` + "\n\n" +
		"data: " + `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}]}` + "\n\n" +
		"data: " + `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}` + "\n\ndata: [DONE]\n\n"
	for _, body := range []struct{ name, body string }{{"whole", whole}, {"events", events}} {
		for _, ct := range []string{"application/json", "text/event-stream"} {
			t.Run(body.name+" as "+ct, func(t *testing.T) {
				m := openAIModel(t, hostileAs(t, http.StatusOK, ct, text(body.body)))
				chunks, resp := collect(t, m, hiRequest())
				if got := chunkText(chunks, model.ChunkText); got != "hello" {
					t.Errorf("text chunks %q, want hello", got)
				}
				if got := chunkText(chunks, model.ChunkThinking); got != "hmm" {
					t.Errorf("thinking chunks %q, want hmm", got)
				}
				calls := resp.ToolCalls()
				if resp.Text() != "hello" || len(calls) != 1 || calls[0].Name != "f" || string(calls[0].Arguments) != `{"a":1}` ||
					resp.FinishReason != model.FinishToolCalls || resp.Usage != (model.Usage{InputTokens: 5, OutputTokens: 2}) {
					t.Errorf("response %+v, want the text, the call, tool_calls and the usage", resp)
				}
				if resp.ID != "chatcmpl-7" || resp.Message.ID != "" {
					t.Errorf("response ID %q, message ID %q: want chatcmpl-7 and empty", resp.ID, resp.Message.ID)
				}
			})
		}
	}
}

// TestOpenAIStreamIncomplete: a stream cut before [DONE] and before any
// finish reason is an incomplete reply, as AnthropicDirect's; one with a
// finish reason but no [DONE] is complete.
func TestOpenAIStreamIncomplete(t *testing.T) {
	m := openAIModel(t, hostile(t, lines(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`)))
	if err := streamErr(t, m); !errors.Is(err, model.ErrIncompleteStream) {
		t.Errorf("err = %v, want ErrIncompleteStream", err)
	}
	m = openAIModel(t, hostile(t, lines(`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"length"}]}`)))
	if _, resp := collect(t, m, hiRequest()); resp.Text() != "a" || resp.FinishReason != model.FinishLength {
		t.Errorf("response %+v, want a, length", resp)
	}
}

// TestOpenAIStreamErrorForms: error events as a string (TGI), as an object
// without a message, and events whose members have the wrong types fail
// the call; data that is not JSON is skipped.
func TestOpenAIStreamErrorForms(t *testing.T) {
	for name, tt := range map[string]struct{ event, want string }{
		"string":        {`{"error":"Input validation error"}`, "Input validation error"},
		"empty message": {`{"error":{"code":500,"message":""}}`, "stream error 500"},
		"type only":     {`{"error":{"type":"overloaded"}}`, "stream error overloaded"},
		"wrong type":    {`{"choices":[{"index":0,"delta":{"content":5}}]}`, "reading the stream"},
	} {
		t.Run(name, func(t *testing.T) {
			m := openAIModel(t, hostile(t, lines(`not json`, `{"choices":[{"index":0,"delta":{"content":"a"}}]}`, tt.event,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`)))
			if err := streamErr(t, m); !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestOpenAIStreamReasoningRefusal: delta.reasoning (Ollama, OpenRouter,
// Groq, vLLM) is thinking; a refusal arrives as text and finishes the
// reply with FinishContentFilter.
func TestOpenAIStreamReasoningRefusal(t *testing.T) {
	m := openAIModel(t, hostile(t, lines(`{"choices":[{"index":0,"delta":{"reasoning":"let me see"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, `[DONE]`)))
	chunks, resp := collect(t, m, hiRequest())
	if chunkText(chunks, model.ChunkThinking) != "let me see" || len(resp.Message.Parts) != 2 ||
		resp.Message.Parts[0].Kind != model.PartThinking || resp.Message.Parts[0].Text != "let me see" || resp.Text() != "ok" {
		t.Errorf("chunks %+v, parts %+v: want the reasoning as thinking", chunks, resp.Message.Parts)
	}
	m = openAIModel(t, hostile(t, lines(`{"choices":[{"index":0,"delta":{"refusal":"I can't"}}]}`,
		`{"choices":[{"index":0,"delta":{"refusal":" help."},"finish_reason":"stop"}]}`, `[DONE]`)))
	chunks, resp = collect(t, m, hiRequest())
	if chunkText(chunks, model.ChunkText) != "I can't help." || resp.Text() != "I can't help." || resp.FinishReason != model.FinishContentFilter {
		t.Errorf("text %q, finish %s: want the refusal as text, content_filter", resp.Text(), resp.FinishReason)
	}
}

// TestOpenAIStreamToolCallSplits: whole calls sent without index and id are
// two calls; one call whose pieces carry a fresh id each is one call.
func TestOpenAIStreamToolCallSplits(t *testing.T) {
	m := openAIModel(t, hostile(t, lines(
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"type":"function","function":{"name":"a","arguments":"{\"x\":1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"type":"function","function":{"name":"b","arguments":"{\"y\":2}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, `[DONE]`)))
	_, resp := collect(t, m, hiRequest())
	calls := resp.ToolCalls()
	if len(calls) != 2 || calls[0].Name != "a" || string(calls[0].Arguments) != `{"x":1}` || calls[1].Name != "b" || string(calls[1].Arguments) != `{"y":2}` {
		t.Errorf("calls %+v, want a and b", calls)
	}
	m = openAIModel(t, hostile(t, lines(
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c2","function":{"arguments":"{\"q\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c3","function":{"arguments":"1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f"}}]},"finish_reason":"tool_calls"}]}`, `[DONE]`)))
	_, resp = collect(t, m, hiRequest())
	calls = resp.ToolCalls()
	if len(calls) != 1 || calls[0].ID != "c1" || calls[0].Name != "f" || string(calls[0].Arguments) != `{"q":1}` {
		t.Errorf("calls %+v, want one call c1 f {\"q\":1}", calls)
	}
}

// TestAnthropicDirectStreamDeltaKinds: a delta of a kind its block does not
// hold, or after the block's content_block_stop, fails the stream.
func TestAnthropicDirectStreamDeltaKinds(t *testing.T) {
	start := func(block string) string {
		return `{"type":"content_block_start","index":0,"content_block":` + block + `}`
	}
	delta := func(d string) string { return `{"type":"content_block_delta","index":0,"delta":` + d + `}` }
	const (
		textBlock  = `{"type":"text","text":""}`
		toolBlock  = `{"type":"tool_use","id":"t1","name":"f","input":{}}`
		thinkBlock = `{"type":"thinking","thinking":""}`
		jsonDelta  = `{"type":"input_json_delta","partial_json":"{}"}`
		textDelta  = `{"type":"text_delta","text":"x"}`
	)
	for name, tt := range map[string]struct {
		events []string
		want   string
	}{
		"json on text":      {[]string{start(textBlock), delta(jsonDelta)}, "input_json_delta for a text block"},
		"json on thinking":  {[]string{start(thinkBlock), delta(jsonDelta)}, "input_json_delta for a thinking block"},
		"json on unknown":   {[]string{start(`{"type":"server_tool_use"}`), delta(jsonDelta)}, "input_json_delta for a server_tool_use block"},
		"text on tool":      {[]string{start(toolBlock), delta(textDelta)}, "text_delta for a tool_use block"},
		"thinking on text":  {[]string{start(textBlock), delta(`{"type":"thinking_delta","thinking":"x"}`)}, "thinking_delta for a text block"},
		"signature on text": {[]string{start(textBlock), delta(`{"type":"signature_delta","signature":"x"}`)}, "signature_delta for a text block"},
		"text after stop":   {[]string{start(textBlock), `{"type":"content_block_stop","index":0}`, delta(textDelta)}, "after its content_block_stop"},
		"stop of no block":  {[]string{start(textBlock), `{"type":"content_block_stop","index":3}`}, "content_block_stop for unknown block 3"},
	} {
		t.Run(name, func(t *testing.T) {
			m := anthropicDirect(t, hostile(t, lines(append(append([]string{aStart}, tt.events...), `{"type":"message_stop"}`)...)), 0)
			if err := streamErr(t, m); !strings.Contains(err.Error(), "reading the stream: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a reading-the-stream error with %q", err, tt.want)
			}
		})
	}
}

// TestReplyCapKeepsStatusError: a failed reply whose body is over a small
// cap keeps its status error (a 429 to retry), not the cap's.
func TestReplyCapKeepsStatusError(t *testing.T) {
	body := text(`{"type":"error","error":{"type":"rate_limit_error","message":"` + strings.Repeat("slow down ", 10000) + `"}}`)
	for name, build := range map[string]func(url string) (*provider.Model, error){
		"anthropic-direct": func(url string) (*provider.Model, error) {
			return provider.AnthropicDirect(provider.AnthropicConfig{APIKey: "k", BaseURL: url, MaxReplyBytes: 1 << 10})
		},
		"openai": func(url string) (*provider.Model, error) {
			return provider.OpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: url + "/v1", MaxReplyBytes: 1 << 10})
		},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := build(hostileAs(t, http.StatusTooManyRequests, "application/json", body))
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Generate(context.Background(), hiRequest())
			if errors.Is(err, provider.ErrReplyTooLarge) {
				t.Fatalf("err = %v, want the status error, not the cap's", err)
			}
			var herr *resilience.HTTPError
			if name == "anthropic-direct" && (!errors.As(err, &herr) || herr.StatusCode != http.StatusTooManyRequests) {
				t.Errorf("err = %v, want a *resilience.HTTPError of 429", err)
			}
			if err == nil || !strings.Contains(err.Error(), "429") {
				t.Errorf("err = %v, want one naming the status 429", err)
			}
		})
	}
}

// TestAnthropicDirectUsageNumbers: fractional and overflowing usage
// figures are clamped, not a failed call.
func TestAnthropicDirectUsageNumbers(t *testing.T) {
	m := anthropicDirect(t, hostileAs(t, http.StatusOK, "application/json", text(`{"id":"msg_1","type":"message","role":"assistant","model":"m",`+
		`"content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn",`+
		`"usage":{"input_tokens":5.0,"output_tokens":1e30,"cache_read_input_tokens":-2,"cache_creation_input_tokens":2.5}}`)), 0)
	resp, err := m.Generate(context.Background(), hiRequest())
	if err != nil {
		t.Fatal(err)
	}
	if want := (model.Usage{InputTokens: 5, OutputTokens: math.MaxInt, CacheWriteTokens: 2}); resp.Usage != want {
		t.Errorf("generate usage = %+v, want %+v", resp.Usage, want)
	}
	m = anthropicDirect(t, hostile(t, lines(`{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":3.0}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1e30}}`, `{"type":"message_stop"}`)), 0)
	if _, resp := collect(t, m, hiRequest()); resp.Usage != (model.Usage{InputTokens: 3, OutputTokens: math.MaxInt}) {
		t.Errorf("stream usage = %+v, want clamped figures", resp.Usage)
	}
}

// TestReplyCapHugeLongLine: a cap at or over 2 GiB still reads lines over
// 64 KiB (on 32-bit platforms too: run with GOARCH=386).
func TestReplyCapHugeLongLine(t *testing.T) {
	long := strings.Repeat("y", 100<<10)
	oEvents := lines(fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q},"finish_reason":"stop"}]}`, long), `[DONE]`)
	m, err := provider.OpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: hostile(t, oEvents) + "/v1", MaxReplyBytes: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	if _, resp := collect(t, m, hiRequest()); resp.Text() != long {
		t.Errorf("openai: text of %d bytes, want %d", len(resp.Text()), len(long))
	}
	m = anthropicDirect(t, hostile(t, lines(aStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, long), `{"type":"message_stop"}`)), math.MaxInt32)
	if _, resp := collect(t, m, hiRequest()); resp.Text() != long {
		t.Errorf("anthropic-direct: text of %d bytes, want %d", len(resp.Text()), len(long))
	}
}

// TestReplyCapBoundary: a reply of exactly MaxReplyBytes is read; one byte
// more fails with ErrReplyTooLarge, streamed or not, on every adapter. (A
// stream reader stops at its final event, so the streamed bodies end there,
// without the blank line that would go unread.)
func TestReplyCapBoundary(t *testing.T) {
	aWhole := `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{}}`
	aStream := "data: " + aStart + "\n\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"hi"}}` +
		"\n\ndata: " + `{"type":"message_stop"}` // no newline: its last byte is read
	oWhole := `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`
	oStream := "data: " + `{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]"
	for _, tt := range []struct {
		name, whole, stream string
		build               func(url string, capBytes int64) (*provider.Model, error)
	}{
		{"anthropic-direct", aWhole, aStream, func(url string, capBytes int64) (*provider.Model, error) {
			return provider.AnthropicDirect(provider.AnthropicConfig{APIKey: "k", BaseURL: url, MaxReplyBytes: capBytes})
		}},
		{"openai", oWhole, oStream, func(url string, capBytes int64) (*provider.Model, error) {
			return provider.OpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: url + "/v1", MaxReplyBytes: capBytes})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			call := func(body string, capBytes int64, stream bool) (string, error) {
				ct := "application/json"
				if stream {
					ct = "text/event-stream"
				}
				m, err := tt.build(hostileAs(t, http.StatusOK, ct, text(body)), capBytes)
				if err != nil {
					t.Fatal(err)
				}
				if !stream {
					resp, err := m.Generate(context.Background(), hiRequest())
					if err != nil {
						return "", err
					}
					return resp.Text(), nil
				}
				resp, err := model.Collect(m.Stream(context.Background(), hiRequest()))
				if err != nil {
					return "", err
				}
				return resp.Text(), nil
			}
			for _, stream := range []bool{false, true} {
				body := tt.whole
				if stream {
					body = tt.stream
				}
				if got, err := call(body, int64(len(body)), stream); err != nil || got != "hi" {
					t.Errorf("stream %v, cap = body length: %q, %v; want hi", stream, got, err)
				}
				if _, err := call(body, int64(len(body))-1, stream); !errors.Is(err, provider.ErrReplyTooLarge) {
					t.Errorf("stream %v, cap = body length - 1: err = %v, want ErrReplyTooLarge", stream, err)
				}
			}
		})
	}
}
