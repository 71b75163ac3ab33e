// Package agent is the language-model layer of agentgraph: a client that
// calls models by name, and a structured caller that turns a model's reply
// into a validated Go value. It speaks the model vocabulary of package
// agent/model; no provider SDK type appears in its API.
//
// # Models and providers
//
// A Client resolves a model name through a Registry. Names are aliases such
// as "haiku", "sonnet", "opus" and "thinking" (see DefaultRegistry), names
// you register with a ModelSpec, or "provider:model-id" such as
// "openai:gpt-4o". A spec says which provider serves the model, under which
// id, and what it can do: extended thinking (and its default budget), native
// JSON mode, tool calling. Providers are model.Models: the provider models
// of package agent/provider built from Config (OpenAI and any
// OpenAI-compatible server, Anthropic, Ollama; ConfigFromEnv reads
// OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, OLLAMA_HOST and
// friends), or any model.Model you pass in Config.Providers or Config.Model.
// Without Config.DefaultModel (AGENTGRAPH_MODEL), the default model follows
// the configured provider: "sonnet" on Anthropic, "openai:gpt-4o" on OpenAI,
// "ollama:llama3.2" on Ollama.
//
// A Client is also a model.Model (package agent/model, the module's model
// vocabulary): Generate and Stream take a model.Request, resolve its Model
// through the registry and run under the resilience policy, so code written
// against the vocabulary (and the provider models of package agent/provider)
// can be given a Client.
//
// Every call runs under the LLM resilience policy: transient provider
// failures (5xx, timeouts, broken connections) are retried with backoff,
// rate limits (429) after the provider's Retry-After, and permanent ones
// (other 4xx) fail at once. Provider errors are *ProviderError values that
// carry the HTTP status and Retry-After hint.
//
// # Usage, thinking and streaming
//
// Each Response carries a [model.Usage] normalised from the provider's own
// figures (input, output, thinking, cache read, cache write); nothing is
// counted locally (langchaingo's CountTokens would fetch BPE files at run
// time, which fails offline). model.Usage has
// a Merge method, so a model.Usage field of a graph state sums the usage of
// a whole run.
//
// With extended thinking (WithThinking, or a spec that thinks by default)
// the model's reasoning is returned in Response.Thinking and never mixed
// into Response.Text. The client handles the provider's rules for it
// (Anthropic: budget below max_tokens, temperature 1, the answer in a later
// content block).
//
// WithStreaming delivers the reply in model.Chunks as it is generated, to
// a callback. Thinking, answer text and tool-call pieces are chunks of
// their own kinds: a streamed tool call never appears as answer text, and
// whoever reads forwarded chunks checks Chunk.Kind (thinking is Text of
// kind ChunkThinking). The package does
// not know the graph engine: a node that wants its model's tokens in the
// run's stream forwards them (graph.Emit in the callback) or calls the
// model through graph.Generate.
//
// # Structured output
//
// Call[T] asks any model.Model (a Client, a provider model, a scripted
// model) for a value of type T. It puts T's JSON Schema in the system
// prompt, extracts the JSON from the reply (bare, in a fenced block, or with
// prose around it), validates it against the schema, decodes it strictly,
// runs T's validate tags and Validate method, and on failure asks again
// with the error and the rejected reply in the prompt. After the last
// attempt (3 by default) it returns a *StructuredOutputError with every
// attempt. Usage of all attempts is reported either way.
//
// Call is cheap beside a model: everything it derives from T (the schema,
// the prompt instruction, the checks) is built once per type. A reply is
// parsed with encoding/json, checked by the JSON Schema validator
// (santhosh-tekuri/jsonschema) and decoded strictly with encoding/json.
// BenchmarkCallOverhead measures the caller around a model that costs
// nothing: tens of microseconds, against the seconds of a real model call.
//
// # Agents built on it
//
// Call and Complete are what the step packages beneath agent build on;
// package agent/react is a prebuilt tool-calling agent.
//
// Package llmtest provides a scripted model for tests.
package agent
