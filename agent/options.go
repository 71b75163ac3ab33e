package agent

import (
	"context"

	"github.com/agentgraph/agentgraph/agent/model"
)

// Option adjusts one call of Complete or Call.
type Option func(*options)

type thinkingChoice int8

const (
	thinkingDefault thinkingChoice = iota // as the model spec says
	thinkingOn
	thinkingOff
)

type options struct {
	model          string
	system         string
	maxTokens      int
	temperature    float64
	hasTemperature bool
	thinking       thinkingChoice
	thinkingBudget int
	stream         bool
	onChunk        func(context.Context, model.Chunk) error
	maxAttempts    int
	outputMode     OutputMode
	check          func(any) error
	emit           func(model.Chunk) error // the chunk receiver of Client.Stream
	final          bool                    // an attempt that has streamed is not retried
}

// WithModel selects the model by registry name, alias or "provider:model-id".
// Without it the client's Config.DefaultModel is used.
func WithModel(name string) Option { return func(o *options) { o.model = name } }

// WithSystem sets the system prompt. Call appends its schema instruction to it.
func WithSystem(prompt string) Option { return func(o *options) { o.system = prompt } }

// WithMaxTokens caps the answer length (thinking tokens come on top).
func WithMaxTokens(n int) Option { return func(o *options) { o.maxTokens = n } }

// WithTemperature sets the sampling temperature. Anthropic requires 1 while
// thinking, so it is ignored for thinking calls to Anthropic.
func WithTemperature(t float64) Option {
	return func(o *options) { o.temperature, o.hasTemperature = t, true }
}

// WithThinking switches extended thinking on with a budget of thinking tokens;
// budget <= 0 uses the model's default budget. The model must support it
// (Capabilities.Thinking), or the call fails with ErrThinkingUnsupported.
// The thinking text is returned in Response.Thinking, never in the answer.
func WithThinking(budget int) Option {
	return func(o *options) { o.thinking, o.thinkingBudget = thinkingOn, budget }
}

// WithoutThinking switches extended thinking off, also for a spec that
// thinks by default.
func WithoutThinking() Option { return func(o *options) { o.thinking = thinkingOff } }

// WithStreaming streams the reply as it is generated: each delta goes to
// fn as a model.Chunk of kind ChunkText (answer text), ChunkThinking
// (thinking text, also in Chunk.Text: check Kind) or ChunkToolCall (a
// piece of one tool call, never in the text). Empty deltas and the final
// ChunkDone are never delivered: the complete reply is what the call
// returns, whose Model names the model that wrote it. An error returned
// by fn aborts the call with that error, without a retry. If a failed
// attempt is retried, the retry streams again from its start.
//
// Nothing reaches a graph run's stream behind the caller's back: a node
// that wants its tokens in the run's stream forwards them, for example with
// graph.Emit in fn, or calls the model through graph.Generate (the
// StreamMessages mode).
func WithStreaming(fn func(ctx context.Context, c model.Chunk) error) Option {
	return func(o *options) { o.stream, o.onChunk = true, fn }
}

// WithMaxAttempts sets how many replies Call asks for before it gives up with
// a *StructuredOutputError. Zero means Config.MaxAttempts (default 3).
func WithMaxAttempts(n int) Option { return func(o *options) { o.maxAttempts = n } }

// WithCheck adds a check that Call runs on a value after its schema, its
// validate tags and its Validate method have passed: a check that needs the
// call's input, such as "the tool must be one of those offered". check gets
// the value (a T, not a *T). A value it rejects is fed back to the model
// like any rejected reply (a *FieldError in the error, or errors.Join of
// several, names the fields), within the same attempt budget.
func WithCheck(check func(v any) error) Option { return func(o *options) { o.check = check } }

// WithOutputMode selects how Call asks for JSON; see OutputMode.
func WithOutputMode(m OutputMode) Option { return func(o *options) { o.outputMode = m } }

// OutputMode selects how Call asks the model for JSON. In every mode the
// schema is in the system prompt and the reply is validated the same way.
type OutputMode int

const (
	// OutputAuto uses native JSON mode where the model has it
	// (Capabilities.JSONMode) and the prompt alone elsewhere.
	OutputAuto OutputMode = iota
	// OutputPrompt relies on the schema instruction in the prompt alone.
	OutputPrompt
	// OutputJSON switches on the provider's JSON mode. Providers without one
	// (Anthropic) ignore it.
	OutputJSON
	// OutputTool offers one tool whose parameters are the schema and reads
	// the JSON from the tool call (falling back to the text if the model
	// answers without calling it).
	OutputTool
)
