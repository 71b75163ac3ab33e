// Package llmtest provides a scripted language model for tests, the way
// net/http/httptest provides test servers.
//
// A Model implements langchaingo's llms.Model. It answers with scripted
// replies, by sequence or by matching the prompt, reports the scripted token
// usage, streams replies in chunks to the streaming callbacks, and fails on
// demand like a real provider: transient errors, rate limits with a
// Retry-After, timeouts and calls that never return. It records every call
// for assertions and is safe for concurrent use.
//
//	m := llmtest.New(llmtest.Text(`{"action":"ANSWER","reasoning":"simple","response":"4"}`))
//	c, _ := agent.New(agent.Config{Model: m})
//	res, err := agent.Call[Decision](ctx, c, "What is 2+2?")
//
// The servers of this package speak the OpenAI and Anthropic HTTP APIs
// (streaming included) from the same scripts, so a test can run
// langchaingo's real provider clients against them.
package llmtest
