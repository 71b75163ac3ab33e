package agentserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/agentserver"
)

// TestDemoModelBoundsItsChunks: the demo model streams a short reply word
// by word, and a reply of many words in at most maxDemoChunks (64) chunks
// (it streamed one per word: an echo of a 200,000-word message was
// 200,000 stream events), which make the whole reply.
func TestDemoModelBoundsItsChunks(t *testing.T) {
	for _, words := range []int{3, agentserver.MaxDemoChunks * 10} {
		text := strings.TrimSpace(strings.Repeat("word ", words))
		req := &model.Request{Messages: model.Messages{model.User(text)}}
		var got strings.Builder
		chunks := 0
		var resp *model.Response
		for c, err := range (agentserver.DemoModel{}).Stream(context.Background(), req) {
			if err != nil {
				t.Fatal(err)
			}
			switch c.Kind {
			case model.ChunkText:
				chunks++
				got.WriteString(c.Text)
			case model.ChunkDone:
				resp = c.Response
			}
		}
		if resp == nil || got.String() != resp.Text() || !strings.HasSuffix(got.String(), text) {
			t.Fatalf("%d words: chunks make %q, reply %v; want the reply echoing the message", words, got.String(), resp)
		}
		replyWords := len(strings.Fields(resp.Text()))
		if want := min(replyWords, agentserver.MaxDemoChunks); chunks != want {
			t.Errorf("%d words: %d chunks; want %d", words, chunks, want)
		}
	}
}

// BenchmarkEchoStream streams (messages-tuple) the agent's run on a user
// message of n words, which the demo model echoes.
func BenchmarkEchoStream(b *testing.B) {
	for _, n := range []int{2500, 5000, 10000} {
		b.Run(fmt.Sprintf("words=%d", n), func(b *testing.B) {
			app, err := agentserver.New(b.Context(), agentserver.Config{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			hs := httptest.NewServer(app)
			defer func() { hs.Close(); _ = app.Close(b.Context()) }()
			text := strings.TrimSpace(strings.Repeat("word ", n))
			body := fmt.Sprintf(`{"assistant_id":"agent","input":{"messages":[{"role":"user","content":%q}]},"stream_mode":["messages-tuple"]}`, text)
			for b.Loop() {
				resp, err := http.Post(hs.URL+"/runs/stream", "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				nb, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				b.ReportMetric(float64(nb), "bytes/op")
			}
		})
	}
}
