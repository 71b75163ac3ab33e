package provider_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/provider"
)

// benchStream serves body and streams one reply of m per iteration.
func benchStream(b *testing.B, body string, build func(url string) (*provider.Model, error)) {
	url := hostile(b, func(w io.Writer) { _, _ = io.WriteString(w, body) })
	m, err := build(url + "/v1")
	if err != nil {
		b.Fatal(err)
	}
	req := hiRequest()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, err := range m.Stream(context.Background(), req) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkStreamManyDeltas streams a reply of n text deltas of size bytes.
func BenchmarkStreamManyDeltas(b *testing.B) {
	for _, c := range []struct{ n, size int }{{5000, 4}, {50000, 4}, {2000, 1024}} {
		piece := strings.Repeat("a", c.size)
		var a, o strings.Builder
		a.WriteString("data: " + aStart + "\n\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		for range c.n {
			fmt.Fprintf(&a, "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n", piece)
			fmt.Fprintf(&o, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", piece)
		}
		a.WriteString("data: {\"type\":\"message_stop\"}\n\n")
		o.WriteString("data: [DONE]\n\n")
		name := fmt.Sprintf("%dx%dB", c.n, c.size)
		b.Run("anthropic-direct/"+name, func(b *testing.B) {
			benchStream(b, a.String(), func(url string) (*provider.Model, error) {
				return provider.AnthropicDirect(provider.AnthropicConfig{APIKey: "k", BaseURL: url})
			})
		})
		b.Run("openai/"+name, func(b *testing.B) {
			benchStream(b, o.String(), func(url string) (*provider.Model, error) {
				return provider.OpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: url})
			})
		})
	}
}
