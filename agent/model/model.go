package model

import (
	"context"
	"encoding/json"
	"iter"
)

// Model is a language model. Implementations are safe for concurrent use.
//
// Generate returns the model's complete reply. Stream returns it piece by
// piece: every chunk but the last is a delta of one kind (text, thinking or a
// tool call), and the last chunk, of kind ChunkDone, carries the complete
// [Response]. A stream that fails yields the error as its last element. Both
// stop when ctx is cancelled, returning ctx's error.
//
// The request belongs to the caller, who must not modify it, nor anything
// it refers to (its messages, parts, tools), once it is passed to Generate
// or Stream: an implementation may keep it beyond the call, as a recording
// test model or a cache does, and read it later. A caller that sends
// another request makes a new one. An implementation does not modify the
// request either; one that needs other values (a model id, defaults)
// copies it first.
type Model interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

// Request is one call to a [Model].
type Request struct {
	// Model names the model to use where the implementation serves several
	// (a registry of aliases); empty means its default.
	Model string `json:"model,omitempty"`
	// Messages is the conversation, oldest first. System messages may
	// appear anywhere; adapters move them where their provider wants them.
	Messages []Message `json:"messages"`
	// Tools are the tools the model may call.
	Tools []ToolDef `json:"tools,omitempty"`
	// ToolChoice says whether and which tools the model must call. The zero
	// value lets the model choose.
	ToolChoice ToolChoice `json:"tool_choice,omitzero"`
	// Temperature, when set, is the sampling temperature.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens caps the reply's tokens; 0 means the adapter's default.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Stop lists sequences that end the reply.
	Stop []string `json:"stop,omitempty"`
	// ResponseFormat asks for JSON output, optionally to a schema.
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
	// Thinking configures extended thinking; nil means the model's default.
	Thinking *Thinking `json:"thinking,omitempty"`
}

// ToolDef describes a tool to a model.
type ToolDef struct {
	// Name is the tool's name: letters, digits, '_' and '-'.
	Name string `json:"name"`
	// Description says what the tool does and when to use it.
	Description string `json:"description"`
	// Parameters is the JSON Schema of the tool's arguments, an object
	// schema. Nil means the tool takes no arguments.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// ToolSummary is a tool's entry in a catalogue: its name and what it does,
// enough for a model or a program to choose it, without its parameters (a
// chosen tool's [ToolDef] has them). Every catalogue of the module lists
// tools as ToolSummary values: the unified tool provider (operator), the MCP
// server registry (mcp) and the context assembler's tools.summaries
// (memory). A catalogue fills the fields that apply to it.
type ToolSummary struct {
	// Name is the name to call the tool by.
	Name string `json:"name"`
	// Title is a human-readable title, when the tool has one.
	Title string `json:"title,omitempty"`
	// Description says what the tool does, in a sentence.
	Description string `json:"description,omitempty"`
	// Source says where the tool lives, for catalogues over several kinds
	// of tool: "local", "operator" or "mcp".
	Source string `json:"source,omitempty"`
	// Server and Tool are, for a tool an MCP server serves, the server's
	// name and the server's own name for the tool (Name may qualify it).
	Server string `json:"server,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// Available is false when the catalogue expects calls to fail: its
	// server is unhealthy or its breaker is open.
	Available bool `json:"available"`
	// ReadOnly and Idempotent are the tool's hints: it changes nothing,
	// and calling it twice with the same arguments does what once does.
	ReadOnly   bool `json:"read_only,omitempty"`
	Idempotent bool `json:"idempotent,omitempty"`
}

// ToolChoiceMode says how a model may use tools.
type ToolChoiceMode string

// The tool choice modes.
const (
	// ToolAuto lets the model answer or call tools. It is the default.
	ToolAuto ToolChoiceMode = ""
	// ToolNone forbids tool calls.
	ToolNone ToolChoiceMode = "none"
	// ToolRequired makes the model call at least one tool.
	ToolRequired ToolChoiceMode = "required"
	// ToolNamed makes the model call the tool named in ToolChoice.Name.
	ToolNamed ToolChoiceMode = "named"
)

// ToolChoice says whether and which tools a model must call.
type ToolChoice struct {
	// Mode is how the model may use tools.
	Mode ToolChoiceMode `json:"mode,omitempty"`
	// Name is the tool to call when Mode is ToolNamed.
	Name string `json:"name,omitempty"`
}

// ResponseFormat asks a model for JSON output.
type ResponseFormat struct {
	// Name names the schema, for providers that require a name.
	Name string `json:"name,omitempty"`
	// Schema is the JSON Schema the output must satisfy; nil asks for any
	// JSON object (JSON mode).
	Schema json.RawMessage `json:"schema,omitempty"`
}

// Thinking configures a model's extended thinking.
type Thinking struct {
	// Disabled turns thinking off where the model would think by default.
	Disabled bool `json:"disabled,omitempty"`
	// Budget is the most tokens the model may think for; 0 means the
	// provider's default.
	Budget int `json:"budget,omitempty"`
}

// FinishReason says why a model stopped.
type FinishReason string

// The finish reasons.
const (
	// FinishStop: the model finished its reply or hit a stop sequence.
	FinishStop FinishReason = "stop"
	// FinishLength: the reply hit MaxTokens or the context limit.
	FinishLength FinishReason = "length"
	// FinishToolCalls: the model stopped to have its tool calls run.
	FinishToolCalls FinishReason = "tool_calls"
	// FinishContentFilter: the provider withheld the reply.
	FinishContentFilter FinishReason = "content_filter"
)

// Response is a model's complete reply to one [Request].
type Response struct {
	// Message is the reply: an assistant message with its thinking, text
	// and tool calls. Implementations leave its ID empty: a provider's id
	// for the reply goes in ID, never in Message.ID, which identifies a
	// message within a conversation (see [Messages.Merge]). A server may
	// answer every call with the same id; as a message id it would make
	// each reply replace the previous one in a conversation.
	Message Message `json:"message"`
	// ID is the provider's id of the reply, such as Anthropic's "msg_…",
	// for logs and support requests; empty when the provider gives none.
	// It is not unique: a server or proxy may repeat it.
	ID string `json:"id,omitempty"`
	// FinishReason says why the model stopped.
	FinishReason FinishReason `json:"finish_reason,omitempty"`
	// Usage counts the call's tokens.
	Usage Usage `json:"usage"`
	// Model is the provider's id of the model that answered.
	Model string `json:"model,omitempty"`
}

// Text returns the reply's text, without thinking.
func (r *Response) Text() string { return r.Message.Text() }

// ToolCalls returns the tool calls of the reply.
func (r *Response) ToolCalls() []ToolCall { return r.Message.ToolCalls() }

// ChunkKind says what a [Chunk] holds.
type ChunkKind string

// The kinds of chunk.
const (
	// ChunkText is a piece of the reply's text: Text.
	ChunkText ChunkKind = "text"
	// ChunkThinking is a piece of the model's thinking: Text.
	ChunkThinking ChunkKind = "thinking"
	// ChunkToolCall is a piece of one tool call: ToolCall.
	ChunkToolCall ChunkKind = "tool_call"
	// ChunkDone ends the stream: Response holds the complete reply.
	ChunkDone ChunkKind = "done"
)

// Chunk is one piece of a streamed reply.
type Chunk struct {
	// Kind says what the chunk holds.
	Kind ChunkKind `json:"kind"`
	// Text is the delta of a ChunkText or ChunkThinking chunk.
	Text string `json:"text,omitempty"`
	// ToolCall is the delta of a ChunkToolCall chunk.
	ToolCall *ToolCallDelta `json:"tool_call,omitempty"`
	// Response is the complete reply, on the ChunkDone chunk.
	Response *Response `json:"response,omitempty"`
	// MessageID is the id, within a conversation, that the reply the
	// chunk is part of will have (see [Messages.Merge]), so that a client
	// merging the chunks it streamed with the conversation it reads later
	// finds one message. Models leave it empty, as they leave
	// Response.Message.ID; the caller that streams the reply into a
	// conversation sets it on every chunk it forwards (graph.Generate
	// does).
	MessageID string `json:"message_id,omitempty"`
}

// ToolCallDelta is a piece of one streamed tool call. The pieces of a call
// share its Index; ID and Name arrive with its first piece, and Arguments
// are appended in order to form the call's JSON arguments.
type ToolCallDelta struct {
	// Index is the call's position among the reply's tool calls.
	Index int `json:"index"`
	// ID is the call's id, on the first piece.
	ID string `json:"id,omitempty"`
	// Name is the tool's name, on the first piece.
	Name string `json:"name,omitempty"`
	// Arguments is the next piece of the JSON arguments.
	Arguments string `json:"arguments,omitempty"`
}

// Collect drains a stream and returns its complete reply: the Response of
// its ChunkDone chunk, or the stream's error. A stream that ends without a
// ChunkDone chunk is an error.
func Collect(stream iter.Seq2[Chunk, error]) (*Response, error) {
	for c, err := range stream {
		if err != nil {
			return nil, err
		}
		if c.Kind == ChunkDone && c.Response != nil {
			return c.Response, nil
		}
	}
	return nil, ErrIncompleteStream
}
