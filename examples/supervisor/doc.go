// Package supervisor holds the model-facing steps of a supervisor loop
// (think, act, observe, decide again) built on package agent's structured
// calls; the graph around them is the caller's. It is an application kit,
// not part of the general SDK: its prompts speak of a chat assistant, and
// the chatbot and swarm examples share it.
//
//   - [Decide] asks for the next [Decision]: answer, call a tool, run a
//     workflow plan, or ask a clarifying question.
//   - [Reflect] judges the results gathered so far: satisfied, need more,
//     or blocked.
//   - [Plan] asks for a workflow plan on its own.
//   - [Critique] reviews one output of a step: approved, fixed or rejected.
//   - [Write] writes the final answer in free text, streamed with
//     agent.WithStreaming.
//
// Every step takes any model.Model (an *agent.Client, a provider model, a
// scripted model) and agent.Options (agent.WithModel picks the model,
// agent.WithSystem replaces the step's system prompt), and returns one
// [Result]: the value, the usage of every attempt, the rejected replies and
// whether the value is the step's fallback. A reply that breaks the step's
// rules (an unknown tool, an invalid plan, a tool call at the last
// iteration) is fed back to the model within the same attempt budget as a
// reply that breaks the schema. When no attempt is valid, Decide, Reflect
// and Critique return a documented fallback value with Fallback set and a
// nil error, so the loop goes on; Plan returns the
// *agent.StructuredOutputError. A failing model call or a cancelled context
// is returned as an error.
//
// The prompts are the package's own and may change between versions.
// Models that answer the steps without a language model (offline demos,
// tests) read a step's request through package supervisortest, not through
// the prompt text.
package supervisor
