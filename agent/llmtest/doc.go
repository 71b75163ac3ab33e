// Package llmtest provides a scripted language model for tests, the way
// net/http/httptest provides test servers.
//
// A Model is a model.Model (Generate, Stream). It answers with scripted
// replies, by sequence or by matching the
// prompt: text, thinking with a signature, native tool calls (several in one
// turn) and token usage. Through Stream it runs in process with no latency,
// yielding text, thinking and tool-call chunks apart, which suits unit tests
// and benchmarks. It fails on demand like a real provider: transient errors,
// rate limits with a Retry-After, timeouts and calls that never return. It
// records every call for assertions (KeepCalls bounds that) and is safe for
// concurrent use.
//
//	m := llmtest.New(
//		llmtest.ToolCalls(llmtest.ToolCall("call_1", "get_weather", map[string]string{"city": "Paris"})),
//		llmtest.Text("Sunny in Paris."))
//	resp, err := m.Generate(ctx, &model.Request{Messages: []model.Message{model.User("Weather in Paris?")}})
//
// The same model serves an agent.Client, behind every model name:
//
//	c, _ := agent.New(agent.Config{Model: m})
//
// The servers of this package speak the OpenAI and Anthropic HTTP APIs
// (streaming included) from the same scripts, so a test can run
// langchaingo's real provider clients against them.
package llmtest
