package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/telemetry"
)

// bigTool answers every call with a text result of n bytes of 'é' (two
// bytes each, so a cut can fall within a character).
type bigTool struct{ n int }

func (b bigTool) Definition() model.ToolDef { return model.ToolDef{Name: "big"} }

func (b bigTool) Call(context.Context, json.RawMessage) (*model.ToolResult, error) {
	return &model.ToolResult{Content: []model.Part{model.TextPart(strings.Repeat("é", b.n/2))}}, nil
}

// eventAttrs returns the attributes of s's events by event name.
func eventAttrs(s sdktrace.ReadOnlySpan) map[string][]attribute.KeyValue {
	out := map[string][]attribute.KeyValue{}
	for _, e := range s.Events() {
		out[e.Name] = e.Attributes
	}
	return out
}

// TestCaptureContentIsBounded: with CaptureContent a tool's 8 MB result,
// its 1 MB arguments and a model call's 1 MB prompt are each recorded cut
// to MaxContentBytes, valid UTF-8, ending with ContentCut, with the length
// before the cut in ContentBytesKey; content within the bound is recorded
// whole, without ContentBytesKey.
func TestCaptureContentIsBounded(t *testing.T) {
	t.Parallel()
	tel, exp, _ := newTelemetry(t, true)
	args := json.RawMessage(`{"q":"` + strings.Repeat("a", 1<<20) + `"}`)
	if _, err := tel.Tool(bigTool{n: 8 << 20}).Call(t.Context(), args); err != nil {
		t.Fatal(err)
	}
	prompt := strings.Repeat("日本", 1<<18) // 1.5 MB
	if _, err := tel.Model(scripted{reply()}, "openai", "gpt-test").Generate(t.Context(),
		&model.Request{Messages: []model.Message{model.User(prompt)}}); err != nil {
		t.Fatal(err)
	}
	promptJSON, err := json.Marshal([]model.Message{model.User(prompt)})
	if err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans().Snapshots()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the tool's and the model's", len(spans))
	}
	want := map[string]int{
		"gen_ai.tool.call.result":    8 << 20,
		"gen_ai.tool.call.arguments": len(args),
		"gen_ai.input.messages":      len(promptJSON),
		"gen_ai.output.messages":     -1, // small: whole
	}
	seen := 0
	for _, s := range spans {
		for name, attrs := range eventAttrs(s) {
			orig, ok := want[name]
			if !ok {
				continue
			}
			seen++
			var content string
			bytes := int64(-1)
			for _, kv := range attrs {
				switch kv.Key {
				case attribute.Key(name):
					content = kv.Value.AsString()
				case telemetry.ContentBytesKey:
					bytes = kv.Value.AsInt64()
				}
			}
			if orig < 0 {
				if bytes != -1 || strings.HasSuffix(content, telemetry.ContentCut) || !strings.Contains(content, "42") {
					t.Errorf("%s: %q with %s=%d, want the whole content without %s", name, content, telemetry.ContentBytesKey, bytes, telemetry.ContentBytesKey)
				}
				continue
			}
			if len(content) > telemetry.MaxContentBytes || !strings.HasSuffix(content, telemetry.ContentCut) || !utf8.ValidString(content) {
				t.Errorf("%s: %d bytes (valid UTF-8 %v, cut marker %v), want at most %d ending with %q",
					name, len(content), utf8.ValidString(content), strings.HasSuffix(content, telemetry.ContentCut), telemetry.MaxContentBytes, telemetry.ContentCut)
			}
			if len(content) < telemetry.MaxContentBytes-len(telemetry.ContentCut)-utf8.UTFMax {
				t.Errorf("%s: %d bytes, want close to %d", name, len(content), telemetry.MaxContentBytes)
			}
			if bytes != int64(orig) {
				t.Errorf("%s: %s = %d, want %d", name, telemetry.ContentBytesKey, bytes, orig)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d content events, want %d", seen, len(want))
	}
}

// TestErrorTypeOfWrappedContextErrors: a provider's error that wraps
// context.Canceled or context.DeadlineExceeded is error.type "canceled"
// or "timeout", as the bare errors are.
func TestErrorTypeOfWrappedContextErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want string
	}{
		{context.Canceled, "canceled"},
		{fmt.Errorf("provider: %w", context.Canceled), "canceled"},
		{context.DeadlineExceeded, "timeout"},
		{fmt.Errorf("post: %w", context.DeadlineExceeded), "timeout"},
		{errProvider, "*errors.errorString"},
	} {
		tel, exp, _ := newTelemetry(t, false)
		_, _ = tel.Model(erring{err: c.err}, "openai", "gpt-test").Generate(t.Context(), &model.Request{})
		if v, ok := attr(exp.GetSpans().Snapshots()[0], "error.type"); !ok || v.AsString() != c.want {
			t.Errorf("error %v: error.type %q, want %q", c.err, v.AsString(), c.want)
		}
	}
}

// erring is a model whose Generate fails with err.
type erring struct {
	scripted
	err error
}

func (e erring) Generate(context.Context, *model.Request) (*model.Response, error) { return nil, e.err }
