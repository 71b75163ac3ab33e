package event

import (
	"strings"
	"time"
)

// Type names a kind of event. Types are lower-case, dot-separated words
// ("tool.progress", "workflow.step.start"); the value is what appears in the
// "type" field of the JSON form and in the event: line of the SSE form.
type Type string

// The event catalogue. Each type has one payload struct whose EventType method
// returns it; the payload's fields are the JSON fields that follow "type".
const (
	// TypeSupervisorThinking: the supervisor is deciding what to do next.
	TypeSupervisorThinking Type = "supervisor.thinking"
	// TypeSupervisorDecided: the supervisor chose an action.
	TypeSupervisorDecided Type = "supervisor.decided"

	// TypeToolStart: a tool or operator started.
	TypeToolStart Type = "tool.start"
	// TypeToolProgress: a running tool reported progress. Coalescable.
	TypeToolProgress Type = "tool.progress"
	// TypeToolContent: a tool produced a content item (text, image, widget).
	TypeToolContent Type = "tool.content"
	// TypeToolComplete: a tool finished successfully.
	TypeToolComplete Type = "tool.complete"
	// TypeToolError: a tool failed.
	TypeToolError Type = "tool.error"

	// TypeMCPProgress is the internal form of [TypeToolProgress], raised by an MCP
	// server callback. Coalescable. See [ToUserFacing].
	TypeMCPProgress Type = "mcp.progress"
	// TypeMCPContent is the internal form of [TypeToolContent].
	TypeMCPContent Type = "mcp.content"
	// TypeMCPElicitation is the internal form of [TypeElicitationRequest].
	TypeMCPElicitation Type = "mcp.elicitation"
	// TypeMCPError is the internal form of [TypeToolError].
	TypeMCPError Type = "mcp.error"

	// TypeWorkflowCreated: the supervisor planned a multi-step workflow.
	TypeWorkflowCreated Type = "workflow.created"
	// TypeWorkflowStepStart: a workflow step started.
	TypeWorkflowStepStart Type = "workflow.step.start"
	// TypeWorkflowStepComplete: a workflow step finished.
	TypeWorkflowStepComplete Type = "workflow.step.complete"
	// TypeWorkflowComplete: every step of the workflow finished.
	TypeWorkflowComplete Type = "workflow.complete"

	// TypeResponseChunk: a piece of the final answer, streamed by the writer.
	TypeResponseChunk Type = "response.chunk"
	// TypeResponseDone: the final answer is complete. Terminal.
	TypeResponseDone Type = "response.done"

	// TypeDirectResponse: an operator sent a complete answer straight to the
	// user, bypassing the writer.
	TypeDirectResponse Type = "direct.response"
	// TypeDirectResponseStart: an operator starts streaming a direct answer.
	TypeDirectResponseStart Type = "direct.response.start"
	// TypeDirectResponseChunk: a piece of a direct answer.
	TypeDirectResponseChunk Type = "direct.response.chunk"
	// TypeDirectResponseDone: the direct answer is complete.
	TypeDirectResponseDone Type = "direct.response.done"

	// TypeElicitationRequest: a tool or operator needs input from the user.
	TypeElicitationRequest Type = "elicitation.request"
	// TypeElicitationResponse: the user answered (or declined) an elicitation.
	TypeElicitationResponse Type = "elicitation.response"

	// TypeClarifyRequest: the supervisor asks the user to clarify. Terminal.
	TypeClarifyRequest Type = "clarify.request"
	// TypeError: something failed in a way the user should see.
	TypeError Type = "error"

	// TypeTokenUsage reports language-model tokens spent so far.
	TypeTokenUsage Type = "token.usage"
)

// Coalescable reports whether events of type t may be replaced by a newer
// event of the same type and source while they wait in a full [Emitter]
// buffer. Only progress reports are: a newer one supersedes an older one.
func (t Type) Coalescable() bool { return t == TypeToolProgress || t == TypeMCPProgress }

// Terminal reports whether t ends the user-visible part of a request:
// [TypeResponseDone] (the answer is complete) and [TypeClarifyRequest] (the
// user has to answer first). An error event is not terminal by type: a run
// may report an error and go on (a tool failed, another is tried), and a
// stream uses error events for notices such as lost events; a run that fails
// reports an error and then ends its stream.
func (t Type) Terminal() bool { return t == TypeResponseDone || t == TypeClarifyRequest }

// Internal reports whether t is an internal mcp.* event that must be mapped
// with [ToUserFacing] before it reaches a user.
func (t Type) Internal() bool { return strings.HasPrefix(string(t), "mcp.") }

// Event is one typed event of one request: the envelope (request id,
// sequence number, time) and a payload.
//
// Its JSON form is flat, the payload's fields following the envelope's:
//
//	{"type":"tool.progress","request_id":"req-1","seq":7,"timestamp":"2026-01-02T03:04:05.000000006Z","tool":"search","progress":0.5,"message":"Processing..."}
type Event struct {
	// Type is the payload's type. [Emitter.Emit] and [Event.MarshalJSON]
	// fill it from Payload when it is empty.
	Type Type
	// RequestID identifies the request the event belongs to.
	RequestID string
	// Seq is the event's position among its request's events, from 1. An
	// [Emitter] numbers events in emit order; a gap in the numbers delivered to
	// a consumer is explained by the Coalesced count of the event after it.
	Seq uint64
	// Time is when the event was emitted. It is encoded in UTC with
	// nanoseconds (RFC 3339).
	Time time.Time
	// Coalesced is how many earlier progress events of the same source this
	// one replaced while the consumer was behind (0 normally).
	Coalesced int
	// Payload holds the type-specific fields. After decoding it is a value of
	// the catalogue struct for Type (for example [ToolProgress]), or a
	// [Raw] when the type is not in the catalogue.
	Payload Payload
}

// Payload is the type-specific part of an [Event]. The catalogue structs in
// this package implement it; a user-defined struct may too (it is encoded with
// encoding/json and decodes as [Raw]). Its JSON fields must not be named type,
// request_id, seq, timestamp or coalesced.
type Payload interface {
	// EventType returns the type of event the payload belongs to.
	EventType() Type
}

// Raw is the payload of a decoded event whose type is not in the catalogue.
type Raw struct {
	// Type is the event's type.
	Type Type
	// Fields is the event's JSON object without the envelope fields.
	Fields []byte
}

// EventType returns r.Type.
func (r Raw) EventType() Type { return r.Type }
