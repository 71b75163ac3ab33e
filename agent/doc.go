// Package agent is the language-model layer of agentgraph: a client that
// calls models by name through langchaingo, and a structured caller that
// turns a model's reply into a validated Go value.
//
// # Models and providers
//
// A Client resolves a model name through a Registry. Names are aliases such
// as "haiku", "sonnet", "opus" and "thinking" (see DefaultRegistry), names
// you register with a ModelSpec, or "provider:model-id" such as
// "openai:gpt-4o". A spec says which provider serves the model, under which
// id, and what it can do: extended thinking (and its default budget), native
// JSON mode, tool calling. Providers are langchaingo models built from
// Config (OpenAI and any OpenAI-compatible server, Anthropic, Ollama;
// ConfigFromEnv reads OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY,
// OLLAMA_HOST and friends) or any llms.Model you pass in Config.Providers.
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
// Each Response carries a TokenUsage normalised from the provider's own
// figures (input, output, thinking, cache read, cache write); nothing is
// counted locally (langchaingo's CountTokens would fetch BPE files at run
// time, which fails offline). TokenUsage has
// a Merge method, so a TokenUsage field of a graph state sums the usage of
// a whole run.
//
// With extended thinking (WithThinking, or a spec that thinks by default)
// the model's reasoning is returned in Response.Thinking and never mixed
// into Response.Text. The client handles the provider's rules for it
// (Anthropic: budget below max_tokens, temperature 1, the answer in a later
// content block).
//
// WithStreaming delivers the reply in Chunks as it is generated, to a
// callback and, inside a streaming graph run, to the run's stream. Thinking,
// answer text and tool-call pieces are chunks of their own: a streamed tool
// call never appears as answer text.
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
// the prompt instruction, the checks) is built once per type, and a reply is
// parsed once. The full JSON Schema validator and encoding/json run only
// when a reply needs them (a keyword or a type beyond the common ones, or an
// error to word), so the feedback is the same either way.
// BenchmarkCallOverhead measures the caller around a model that costs
// nothing.
//
// # Supervisor decisions
//
// Four calls are the model-facing steps of a supervisor loop (think, act,
// observe, decide again); the graph around them is the caller's.
//
// Decide asks for a [Decision]: ANSWER (a response), CALL_TOOL (a tool
// and its arguments), CREATE_WORKFLOW (a plan.Plan of package operator/plan) or CLARIFY (a
// question); [Action.Route] gives the lower-case name to branch on. The
// model sees the query, the tools as [ToolSummary] lines, the
// conversation, the [Observation] values gathered so far and the
// iteration. Besides the schema and Decision.Validate (the field each
// action needs; for a plan, the executor's own rules), Decide
// rejects, with feedback and within the same attempt budget, a tool or
// step operator that was not listed and any tool call or workflow at the
// last iteration. When no attempt is valid it returns a CLARIFY asking the
// user to rephrase ([ClarifyFallback]) with Fallback set and a nil error,
// so the turn goes on.
//
// Reflect asks for a [Reflection] of the results: satisfied, need_more
// (with what is missing) or blocked (with why). A tool that already
// answered the user (ReflectInput.DirectResponse) gives
// AssessDirectResponse without a model call. At the last iteration the
// model is told need_more is not an option, and a need_more that comes
// back anyway is decided from the results: satisfied when one succeeded,
// blocked otherwise. With no valid reply it decides the same way and sets
// Fallback.
//
// PlanWorkflow asks for a plan on its own, limited to the listed
// operators, and returns the *StructuredOutputError when no attempt is
// valid. The plan is the one type the executor (package
// operator/workflow) runs, validated by the same rules. Write asks for the final answer in free text from the
// results and a draft, through Client.Complete, so it streams.
//
// # Self-correction
//
// Critique is the self-correction step of an agent loop: it asks for a
// [Review] of one output of a step (the task, the call that produced it,
// the output or the error, the attempt): APPROVED keeps the output, FIXED
// carries the corrected output, REJECTED carries feedback for another
// attempt. A failed step is never approved, and with no valid reply
// Critique returns [FallbackReview] (approved when the step succeeded,
// rejected with its error otherwise) with Fallback set.
//
// # Prompts
//
// The prompts are exported: the system prompts SupervisorSystem,
// ReflectionSystem, PlanSystem, WriterSystem and CritiqueSystem
// (WithSystem replaces them), and the renderers SupervisorPrompt,
// ReflectionPrompt, PlanPrompt, WritePrompt and CritiquePrompt, which show
// what a call sends. Each human prompt starts with its marker line
// ([MarkerSupervisor], [MarkerReflection], [MarkerPlan], [MarkerWrite],
// [MarkerCritique]) and is cut into "## " sections (Question, Tools or
// Operators, Conversation, Results, Iteration, Draft; Task, Call, Output,
// Error, Attempt for the critique), a stable contract that a rule-based
// offline model can read and logs can be searched for.
//
// Package llmtest provides a scripted model for tests.
package agent
