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

// hostile starts a server that answers every request with body, written
// by write (a whole string when write is nil), as an event stream unless
// body starts with '{'.
func hostile(t *testing.T, write func(w io.Writer)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
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
// assembled whole (linearly: see BenchmarkAnthropicDirectManyDeltas).
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
