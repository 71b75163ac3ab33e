// Package provider adapts language-model providers to the model vocabulary:
// each Model it builds is a [model.Model] over a provider's HTTP API, by way
// of langchaingo's clients. [OpenAI] serves OpenAI and any OpenAI-compatible
// server (vLLM, LM Studio, OpenRouter) through a base URL, [Anthropic] serves
// Anthropic's Messages API ([AnthropicDirect] without langchaingo, see
// below), [Ollama] serves Ollama, and [FromEnv] picks the model the
// environment configures.
//
//	m, err := provider.FromEnv() // OPENAI_API_KEY alone: gpt-4o on OpenAI
//	resp, err := m.Generate(ctx, &model.Request{
//		Messages: []model.Message{model.User("What is the capital of France?")},
//	})
//
// No langchaingo type appears in this package's API.
//
// # What each request field becomes
//
// Messages: system messages become the provider's system prompt; user text
// and images (inline Data, or a URL for OpenAI); assistant text and tool
// calls; tool results, one provider message per result, as text (a result's
// text parts, else its Structured JSON; a failed result's text is prefixed
// with "error: "). Tools become function tools with their JSON Schema;
// ToolChoice becomes OpenAI's tool_choice ("none", "required" or a named
// function). Temperature, MaxTokens and Stop map to their fields.
// ResponseFormat switches on JSON mode (OpenAI's response_format
// json_object). Thinking.Budget becomes Anthropic's thinking budget (with
// max_tokens raised by the budget and temperature 1, as Anthropic requires).
//
// Responses: one assistant message whose parts are, in the provider's
// order, thinking (with Anthropic's signature), text and tool calls; the
// finish reason normalised (stop, length, tool_calls, content_filter); usage
// normalised as [model.Usage] documents, cache and reasoning tokens apart.
//
// Streams never mix kinds: text, thinking and tool-call deltas are chunks
// of their own kinds on every provider, and the last chunk carries the
// complete response with its usage. OpenAI streams each tool call as it is
// generated (a first chunk with its id and name, then pieces of its
// arguments). The pieces are assembled by the index the wire gives them,
// so calls whose pieces interleave keep their own arguments, in the chunks'
// Index and in the response.
//
// An OpenAI model's streamed replies are read by this package, not by
// langchaingo (which builds and sends the request): its reader grows a reply
// by string concatenation, quadratic in the number of deltas, refuses lines
// over 64 KiB (a tool call sent whole, as Ollama does) and drops the index
// of tool-call pieces. This package's reader takes lines up to the reply
// cap, grows the reply in linear time and fails the call on an error event
// (an object, even without a message, or a string) and on an event whose
// members have the wrong types; data that is not JSON is skipped. It tells
// a whole chat.completion reply from a stream by the body, not by the
// Content-Type, and delivers the parts of either as chunks. A stream that
// ends before "[DONE]" and without a finish reason fails with
// [model.ErrIncompleteStream], as [AnthropicDirect]'s does. Thinking is
// read from reasoning_content or, when that is empty, reasoning (Ollama,
// OpenRouter, Groq, vLLM). A refusal arrives as text, and the reply
// finishes with content_filter. A tool-call piece carrying a function name
// starts a new call when the call at its index already has a name (whole
// calls sent without index or id) or another id; pieces without a name
// continue the call at their index whatever their id.
//
// # Hostile servers
//
// Every configuration has a MaxReplyBytes, the most bytes of one reply
// read (DefaultMaxReplyBytes, 16 MiB, when zero): a longer reply, streamed
// or not, and a stream that never ends fail the call with an error wrapping
// [ErrReplyTooLarge] that names the field; a reply of exactly the cap is
// read. A failed reply (status 400 and above) keeps its status error even
// when its body is over the cap, so a 429 or 503 is still retried. Usage
// figures are clamped to zero and saturate rather than wrap, fractions
// and overflowing figures included. [AnthropicDirect] fails a stream whose
// delta does not match its block's kind (an input_json_delta of a text
// block) or follows the block's content_block_stop. [AnthropicDirect] and the OpenAI
// stream reader grow replies in linear time; langchaingo's Anthropic client
// ([Anthropic]) still grows a streamed reply by concatenation, so its cost
// within the cap is quadratic in the number of deltas: use [AnthropicDirect]
// against a server you do not trust.
//
// # Gaps of the langchaingo clients (v0.1.14)
//
// These are documented rather than papered over; each says what a caller
// sees. [AnthropicDirect] speaks Anthropic's Messages API without
// langchaingo and closes every Anthropic gap below except ResponseFormat
// (Anthropic has no JSON mode): use it for a thinking model in a tool loop.
//
//   - Thinking is not sent back. langchaingo's messages have no thinking
//     part, so a thinking part of an assistant message is dropped from the
//     request. OpenAI does not take reasoning back anyway; Anthropic does,
//     and requires the signed thinking block before a tool_use block when
//     thinking is on: a thinking Anthropic model therefore cannot continue a
//     tool loop through this adapter (Anthropic rejects the second request).
//     Use thinking on Anthropic for turns without tools, or turn it off.
//   - Anthropic streaming drops thinking signatures. Its streaming client
//     ignores signature_delta events, so a streamed thinking part has an
//     empty Signature; Generate (not streamed) keeps it.
//   - Anthropic tool calls are not streamed piece by piece. Its streaming
//     client swallows input_json_delta events; each tool call arrives as one
//     ChunkToolCall chunk, whole, after the text and before ChunkDone.
//   - Anthropic ignores ToolChoice and ResponseFormat: its client has no
//     field for tool_choice and no JSON mode. Structured output on Anthropic
//     relies on the schema in the prompt (agent.Call does that).
//   - Anthropic thinking is sent only for model ids langchaingo knows to
//     think (containing claude-3-7, claude-sonnet-4, claude-opus-4, claude-4
//     or a 5 of those), with a budget of at least 1024 tokens; for other ids
//     Thinking is silently not sent by langchaingo.
//   - Anthropic images must be inline (Part.Data); a URL is an error.
//   - ResponseFormat.Schema is not sent as OpenAI's json_schema by default:
//     langchaingo sets a response schema only per client, not per call, so
//     a schema asks for JSON mode (json_object) and the schema belongs in the
//     prompt. OpenAIConfig.StructuredOutputs closes this gap: the model's
//     HTTP transport puts the request's schema in the body as json_schema.
//   - Messages carry no id: providers return none through langchaingo, so
//     the response message's ID is empty, for a messages reducer to assign.
//   - ToolResult.IsError has no wire field (Anthropic's is_error is not
//     carried), hence the "error: " prefix above.
//   - Ollama is reached through its OpenAI-compatible API (Host+"/v1"):
//     langchaingo's client of Ollama's native API has no tool calling.
//     Ollama's thinking is not separated on that API.
//
// A Model makes one attempt per call and returns the provider's error
// wrapped with "provider <name>:<model-id>"; retries, rate limits and
// breakers belong to the caller (agent.Client runs every call under its
// resilience policy).
package provider
