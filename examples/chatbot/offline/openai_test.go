package offline_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/examples/supervisor/supervisortest"
)

// openAIClient is an agent.Client whose default model is the offline model
// reached through langchaingo's OpenAI client over loopback HTTP, or
// through the model's in-process Transport when inProcess is set.
func openAIClient(t *testing.T, m *offline.Model, inProcess bool) *agent.Client {
	t.Helper()
	cfg := agent.Config{DefaultModel: "openai:" + m.Name()}
	if inProcess {
		cfg.OpenAI = &provider.OpenAIConfig{BaseURL: "http://offline/v1", APIKey: "offline"}
		cfg.HTTPClient = &http.Client{Transport: m.Transport()}
	} else {
		srv := httptest.NewServer(m.Handler())
		t.Cleanup(srv.Close)
		cfg.OpenAI = &provider.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "offline"}
	}
	c, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var transports = []struct {
	name      string
	inProcess bool
}{{"loopback", false}, {"in-process", true}}

func estimate(system, prompt string) int {
	return offline.EstimateTokens(system) + 4 + offline.EstimateTokens(prompt) + 4
}

func TestOpenAIWireDecide(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := openAIClient(t, offline.New(offline.Config{}), tr.inProcess)
			in := supervisor.DecideInput{Query: "How much does the Team plan cost?", Iteration: 1, MaxIterations: 5,
				Tools: []model.ToolDef{{Name: "search_knowledge", Description: "Search the knowledge base."}}}
			dres, err := supervisor.Decide(context.Background(), c, in)
			d, usage := dres.Value, dres.Usage
			if err != nil {
				t.Fatal(err)
			}
			want := supervisor.Decision{Action: supervisor.ActionCallTool, Tool: "search_knowledge", Arguments: map[string]any{"query": "team plan cost"}}
			d.Reasoning = ""
			if diff := cmp.Diff(want, d); diff != "" {
				t.Errorf("Decide over HTTP (-want +got):\n%s", diff)
			}
			prompt, err := supervisortest.Prompt(supervisortest.Request{Step: supervisortest.Decide, Query: in.Query, Tools: in.Tools,
				Iteration: in.Iteration, MaxIterations: in.MaxIterations})
			if err != nil {
				t.Fatal(err)
			}
			// The input counts the system prompt (the step's own) on top of the user's.
			if usage.InputTokens <= estimate("", prompt) || usage.OutputTokens == 0 {
				t.Errorf("usage = %+v, want the estimate of the prompt and the reply", usage)
			}
		})
	}
}

func TestOpenAIWireWrite(t *testing.T) {
	in := supervisor.WriteInput{Query: "How much does the Team plan cost?", Observations: []supervisor.Observation{{
		Source: "search_knowledge", Content: "[1] pricing § Team (score 4.20)\nTeam costs $49 per editor per month with no editor limit. It adds unlimited dashboards.",
	}}}
	prompt, err := supervisortest.Prompt(supervisortest.Request{Step: supervisortest.Write, Query: in.Query, Observations: in.Observations})
	if err != nil {
		t.Fatal(err)
	}
	want := `Here is what I found:

- "Team costs $49 per editor per month with no editor limit." (search_knowledge: pricing § Team)`
	// The input counts the writer's system prompt (the step's own) on top
	// of the user's.
	wantOut := offline.EstimateTokens(want)

	for _, tr := range transports {
		for _, stream := range []bool{false, true} {
			t.Run(tr.name+"/"+map[bool]string{false: "plain", true: "streaming"}[stream], func(t *testing.T) {
				c := openAIClient(t, offline.New(offline.Config{ChunkRunes: 10}), tr.inProcess)
				var chunks []string
				var opts []agent.Option
				if stream {
					opts = append(opts, agent.WithStreaming(func(_ context.Context, ch model.Chunk) error {
						if ch.Kind == model.ChunkText {
							chunks = append(chunks, ch.Text)
						}
						return nil
					}))
				}
				resp, err := supervisor.Write(context.Background(), c, in, opts...)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, resp.Value); diff != "" {
					t.Errorf("answer (-want +got):\n%s", diff)
				}
				if u := resp.Usage; u.InputTokens <= estimate("", prompt) || u.OutputTokens != wantOut {
					t.Errorf("usage = %+v, want more than %d in (the prompts) and %d out", u, estimate("", prompt), wantOut)
				}
				if stream {
					if len(chunks) < 5 || strings.Join(chunks, "") != want {
						t.Errorf("streamed %d chunks joining to %q, want the answer in 10-rune pieces", len(chunks), strings.Join(chunks, ""))
					}
				} else if len(chunks) != 0 {
					t.Errorf("%d chunks streamed without streaming", len(chunks))
				}
			})
		}
	}
}

// TestHandlerRaw checks the wire format itself: the SSE frames, the final
// usage chunk, forced function calls and errors.
func TestHandlerRaw(t *testing.T) {
	m := offline.New(offline.Config{ChunkRunes: 8})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	t.Run("loopback", func(t *testing.T) { testHandlerRaw(t, http.DefaultClient, srv.URL) })
	t.Run("in-process", func(t *testing.T) { testHandlerRaw(t, &http.Client{Transport: m.Transport()}, "http://offline") })
}

func testHandlerRaw(t *testing.T, client *http.Client, base string) {
	post := func(t *testing.T, body string) *http.Response {
		t.Helper()
		resp, err := client.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}

	t.Run("stream", func(t *testing.T) {
		resp := post(t, `{"model":"x","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}]}`)
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type = %q", ct)
		}
		var frames []map[string]any
		var done bool
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			if data == "[DONE]" {
				done = true
				break
			}
			var f map[string]any
			if err := json.Unmarshal([]byte(data), &f); err != nil {
				t.Fatalf("frame %q: %v", data, err)
			}
			frames = append(frames, f)
		}
		if !done || len(frames) < 4 {
			t.Fatalf("%d frames, [DONE] %v", len(frames), done)
		}
		var text strings.Builder
		for _, f := range frames[:len(frames)-1] {
			ch := f["choices"].([]any)[0].(map[string]any)
			if c, ok := ch["delta"].(map[string]any)["content"].(string); ok {
				text.WriteString(c)
			}
		}
		if !strings.HasPrefix(text.String(), "Hello!") {
			t.Errorf("streamed text %q", text.String())
		}
		finish := frames[len(frames)-2]["choices"].([]any)[0].(map[string]any)["finish_reason"]
		last := frames[len(frames)-1]
		if finish != "stop" || len(last["choices"].([]any)) != 0 {
			t.Errorf("finish %v, last frame %v: want stop, then a usage chunk with no choices", finish, last)
		}
		u := last["usage"].(map[string]any)
		wantOut := float64(offline.EstimateTokens(text.String()))
		if u["prompt_tokens"] != float64(offline.EstimateTokens("hello")+4) || u["completion_tokens"] != wantOut ||
			u["total_tokens"] != u["prompt_tokens"].(float64)+wantOut {
			t.Errorf("usage %v", u)
		}
	})

	t.Run("forced function", func(t *testing.T) {
		system, _ := json.Marshal("You evaluate the results a chat assistant gathered.")
		prompt, err := supervisortest.Prompt(supervisortest.Request{Step: supervisortest.Reflect, Query: "What is 2+2?",
			Observations: []supervisor.Observation{{Source: "calculate", Content: "2+2 = 4"}}, Iteration: 1, MaxIterations: 5})
		if err != nil {
			t.Fatal(err)
		}
		human, _ := json.Marshal(prompt)
		resp := post(t, `{"model":"x","messages":[{"role":"system","content":`+string(system)+`},{"role":"user","content":`+string(human)+`}],
			"tool_choice":{"type":"function","function":{"name":"reflection"}}}`)
		var body struct {
			Choices []struct {
				Message struct {
					ToolCalls []struct {
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
				FinishReason string `json:"finish_reason"`
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		tc := body.Choices[0].Message.ToolCalls
		if body.Choices[0].FinishReason != "tool_calls" || len(tc) != 1 || tc[0].Function.Name != "reflection" ||
			!strings.Contains(tc[0].Function.Arguments, `"assessment":"satisfied"`) {
			t.Errorf("response %+v, want a reflection function call that is satisfied", body)
		}
	})

	for _, tt := range []struct{ name, method, path, body, want string }{
		{"bad json", "POST", "/v1/chat/completions", `{`, "not a chat completions request"},
		{"no messages", "POST", "/v1/chat/completions", `{"messages":[]}`, "messages is empty"},
		{"bad role", "POST", "/v1/chat/completions", `{"messages":[{"role":"robot","content":"hi"}]}`, "messages[0].role"},
		{"unknown path", "GET", "/v1/embeddings", ``, "no such endpoint"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, base+tt.path, strings.NewReader(tt.body))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode/100 != 4 || !strings.Contains(string(b), tt.want) {
				t.Errorf("%d %s, want a 4xx naming %q", resp.StatusCode, b, tt.want)
			}
		})
	}

	t.Run("models", func(t *testing.T) {
		resp, err := client.Get(base + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(b), `"id":"`+offline.DefaultName+`"`) {
			t.Errorf("models: %s", b)
		}
	})
}

func httptestServer(tb testing.TB, m *offline.Model) string {
	srv := httptest.NewServer(m.Handler())
	tb.Cleanup(srv.Close)
	return srv.URL
}
