package event

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// The interim catalogue: the payloads the operator, tool and workflow
// packages still report (and a nil Decoder still decodes) until they report
// their own types; the chat protocol is in examples/chatbot/chatevent.
const (
	// TypeSupervisorThinking: the supervisor is deciding what to do next.
	TypeSupervisorThinking Type = "supervisor.thinking"
	// TypeSupervisorDecided: the supervisor chose an action.
	TypeSupervisorDecided Type = "supervisor.decided"
	// TypeResponseChunk: a piece of the final answer, streamed by the writer.
	TypeResponseChunk Type = "response.chunk"
	// TypeResponseDone: the final answer is complete. Terminal.
	TypeResponseDone Type = "response.done"
	// TypeClarifyRequest: the supervisor asks the user to clarify. Terminal.
	TypeClarifyRequest Type = "clarify.request"
	// TypeTokenUsage reports language-model tokens spent so far.
	TypeTokenUsage Type = "token.usage"

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
)

// Internal reports whether t is an internal mcp.* event that must be mapped
// with [ToUserFacing] before it reaches a user.
func Internal(t Type) bool { return strings.HasPrefix(string(t), "mcp.") }

// Error types carried by [ToolError.ErrorType] and [MCPError.ErrorType].
const (
	ErrorTimeout    = "timeout"
	ErrorConnection = "connection"
	ErrorExecution  = "execution"
	ErrorValidation = "validation"
)

// Elicitation actions carried by [ElicitationResponse.Action], as in MCP.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// ToolStart is the payload of [TypeToolStart].
type ToolStart struct {
	Tool    string `json:"tool"`
	Message string `json:"message,omitempty"`
}

// ToolProgress is the payload of [TypeToolProgress].
type ToolProgress struct {
	Tool string `json:"tool"`
	// Progress is the completed fraction, from 0 to 1.
	Progress float64 `json:"progress"`
	Message  string  `json:"message,omitempty"`
}

// ToolContent is the payload of [TypeToolContent]: one content item of a
// tool's result.
type ToolContent struct {
	Tool string `json:"tool,omitempty"`
	// ContentType is the item's MIME type ("text/markdown", "image/png",
	// "application/vnd.mcp.widget+json").
	ContentType string `json:"content_type"`
	// Encoding is "base64" for binary data, empty otherwise.
	Encoding string `json:"encoding,omitempty"`
	// Data is the content: a string for text and base64 data, any JSON value
	// (usually an object) for widgets and JSON content. Pre-encoded JSON as a
	// json.RawMessage is written as it is (compacted), which is much cheaper
	// than a map. Decoding gives a string, or map[string]any and the like.
	Data any `json:"data"`
	// Metadata holds optional details such as alt_text, title, dimensions.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ToolComplete is the payload of [TypeToolComplete].
type ToolComplete struct {
	Tool string `json:"tool"`
	// ContentCount is the number of content items the tool returned.
	ContentCount int `json:"content_count"`
}

// ToolError is the payload of [TypeToolError].
type ToolError struct {
	Tool  string `json:"tool"`
	Error string `json:"error"`
	// ErrorType is one of ErrorTimeout, ErrorConnection, ErrorExecution,
	// ErrorValidation, or empty.
	ErrorType string `json:"error_type,omitempty"`
}

// MCPProgress is the payload of [TypeMCPProgress].
type MCPProgress struct {
	Server   string  `json:"server"`
	Tool     string  `json:"tool"`
	Progress float64 `json:"progress"`
	Message  string  `json:"message,omitempty"`
}

// MCPContent is the payload of [TypeMCPContent].
type MCPContent struct {
	Server      string         `json:"server"`
	Tool        string         `json:"tool"`
	ContentType string         `json:"content_type"`
	Encoding    string         `json:"encoding,omitempty"`
	Data        any            `json:"data"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MCPElicitation is the payload of [TypeMCPElicitation].
type MCPElicitation struct {
	Server        string `json:"server"`
	Tool          string `json:"tool"`
	ElicitationID string `json:"elicitation_id"`
	Message       string `json:"message"`
	// Schema is the JSON Schema of the requested answer, if any.
	Schema json.RawMessage `json:"schema,omitempty"`
}

// MCPError is the payload of [TypeMCPError].
type MCPError struct {
	Server    string `json:"server"`
	Tool      string `json:"tool"`
	Error     string `json:"error"`
	ErrorType string `json:"error_type,omitempty"`
}

// WorkflowCreated is the payload of [TypeWorkflowCreated].
type WorkflowCreated struct {
	// Steps is the number of steps in the plan.
	Steps int    `json:"steps"`
	Goal  string `json:"goal,omitempty"`
}

// WorkflowStepStart is the payload of [TypeWorkflowStepStart].
type WorkflowStepStart struct {
	// Step is the step's number, from 1.
	Step int    `json:"step"`
	Name string `json:"name"`
}

// WorkflowStepComplete is the payload of [TypeWorkflowStepComplete].
type WorkflowStepComplete struct {
	Step int `json:"step"`
	// Status is empty when the step succeeded (the seeds' shape), otherwise
	// StepFailed or StepSkipped.
	Status string `json:"status,omitempty"`
	// Error says why the step failed, or which dependency's failure skipped it.
	Error string `json:"error,omitempty"`
}

// Statuses of a [WorkflowStepComplete] that did not succeed.
const (
	// StepFailed: the step's operator returned an error.
	StepFailed = "failed"
	// StepSkipped: the step did not run because a step it depends on failed.
	StepSkipped = "skipped"
)

// WorkflowComplete is the payload of [TypeWorkflowComplete].
type WorkflowComplete struct {
	// Steps is the number of steps that ran.
	Steps int `json:"steps"`
}

// DirectResponse is the payload of [TypeDirectResponse]: a complete answer
// an operator sends without the writer.
type DirectResponse struct {
	Operator    string `json:"operator,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Content     string `json:"content"`
}

// DirectResponseStart is the payload of [TypeDirectResponseStart].
type DirectResponseStart struct {
	Operator    string `json:"operator,omitempty"`
	ContentType string `json:"content_type,omitempty"`
}

// DirectResponseChunk is the payload of [TypeDirectResponseChunk].
type DirectResponseChunk struct {
	Content string `json:"content"`
}

// DirectResponseDone is the payload of [TypeDirectResponseDone].
type DirectResponseDone struct{}

// ElicitationRequest is the payload of [TypeElicitationRequest]: a question
// the user answers through the application's elicitation endpoint.
type ElicitationRequest struct {
	// ElicitationID identifies the pending request; the answer carries it.
	ElicitationID string `json:"elicitation_id"`
	Tool          string `json:"tool,omitempty"`
	Message       string `json:"message"`
	// Options lists the allowed answers of a choice, if it is one.
	Options []string `json:"options,omitempty"`
	// Schema is the JSON Schema of a structured answer, if any.
	Schema json.RawMessage `json:"schema,omitempty"`
}

// ElicitationResponse is the payload of [TypeElicitationResponse].
type ElicitationResponse struct {
	ElicitationID string `json:"elicitation_id"`
	// Action is ActionAccept, ActionDecline or ActionCancel.
	Action string `json:"action"`
	// Content is the answer when Action is ActionAccept.
	Content map[string]any `json:"content,omitempty"`
}

// EventType returns [TypeToolStart].
func (ToolStart) EventType() Type { return TypeToolStart }

// EventType returns [TypeToolProgress].
func (ToolProgress) EventType() Type { return TypeToolProgress }

// EventType returns [TypeToolContent].
func (ToolContent) EventType() Type { return TypeToolContent }

// EventType returns [TypeToolComplete].
func (ToolComplete) EventType() Type { return TypeToolComplete }

// EventType returns [TypeToolError].
func (ToolError) EventType() Type { return TypeToolError }

// EventType returns [TypeMCPProgress].
func (MCPProgress) EventType() Type { return TypeMCPProgress }

// EventType returns [TypeMCPContent].
func (MCPContent) EventType() Type { return TypeMCPContent }

// EventType returns [TypeMCPElicitation].
func (MCPElicitation) EventType() Type { return TypeMCPElicitation }

// EventType returns [TypeMCPError].
func (MCPError) EventType() Type { return TypeMCPError }

// EventType returns [TypeWorkflowCreated].
func (WorkflowCreated) EventType() Type { return TypeWorkflowCreated }

// EventType returns [TypeWorkflowStepStart].
func (WorkflowStepStart) EventType() Type { return TypeWorkflowStepStart }

// EventType returns [TypeWorkflowStepComplete].
func (WorkflowStepComplete) EventType() Type { return TypeWorkflowStepComplete }

// EventType returns [TypeWorkflowComplete].
func (WorkflowComplete) EventType() Type { return TypeWorkflowComplete }

// EventType returns [TypeDirectResponse].
func (DirectResponse) EventType() Type { return TypeDirectResponse }

// EventType returns [TypeDirectResponseStart].
func (DirectResponseStart) EventType() Type { return TypeDirectResponseStart }

// EventType returns [TypeDirectResponseChunk].
func (DirectResponseChunk) EventType() Type { return TypeDirectResponseChunk }

// EventType returns [TypeDirectResponseDone].
func (DirectResponseDone) EventType() Type { return TypeDirectResponseDone }

// EventType returns [TypeElicitationRequest].
func (ElicitationRequest) EventType() Type { return TypeElicitationRequest }

// EventType returns [TypeElicitationResponse].
func (ElicitationResponse) EventType() Type { return TypeElicitationResponse }

// Validate implements [Validator].
func (p ToolStart) Validate() error { return required(p, "tool", p.Tool) }

// Validate implements [Validator].
func (p ToolProgress) Validate() error {
	if err := required(p, "tool", p.Tool); err != nil {
		return err
	}
	return fraction(p, p.Progress)
}

// Validate implements [Validator].
func (p ToolComplete) Validate() error { return required(p, "tool", p.Tool) }

// Validate implements [Validator].
func (p ToolError) Validate() error { return required(p, "tool", p.Tool) }

// Validate implements [Validator].
func (p ToolContent) Validate() error { return required(p, "content_type", p.ContentType) }

// Validate implements [Validator].
func (p MCPProgress) Validate() error {
	if err := required(p, "server", p.Server); err != nil {
		return err
	}
	if err := required(p, "tool", p.Tool); err != nil {
		return err
	}
	return fraction(p, p.Progress)
}

// Validate implements [Validator].
func (p MCPContent) Validate() error { return required(p, "content_type", p.ContentType) }

// Validate implements [Validator].
func (p MCPElicitation) Validate() error { return required(p, "elicitation_id", p.ElicitationID) }

// Validate implements [Validator].
func (p WorkflowStepStart) Validate() error { return positive(p, "step", p.Step) }

// Validate implements [Validator].
func (p WorkflowStepComplete) Validate() error {
	if err := positive(p, "step", p.Step); err != nil {
		return err
	}
	switch p.Status {
	case "", StepFailed, StepSkipped:
		return nil
	}
	return &ValidationError{Type: p.EventType(), Field: "status", Reason: strconv.Quote(p.Status) + " is not one of \"\" (succeeded), failed, skipped"}
}

// Validate implements [Validator].
func (p ElicitationRequest) Validate() error { return required(p, "elicitation_id", p.ElicitationID) }

// Validate implements [Validator].
func (p ElicitationResponse) Validate() error {
	if err := required(p, "elicitation_id", p.ElicitationID); err != nil {
		return err
	}
	switch p.Action {
	case ActionAccept, ActionDecline, ActionCancel:
		return nil
	}
	return &ValidationError{Type: p.EventType(), Field: "action", Reason: strconv.Quote(p.Action) + " is not one of accept, decline, cancel"}
}

// CoalesceKey implements [Coalescer].
func (p ToolProgress) CoalesceKey() string { return p.Tool }

// CoalesceKey implements [Coalescer].
func (p MCPProgress) CoalesceKey() string { return p.Server + "/" + p.Tool }

func required(p Payload, field, v string) error {
	if v == "" {
		return &ValidationError{Type: p.EventType(), Field: field, Reason: "is empty; set it"}
	}
	return nil
}

func positive(p Payload, field string, v int) error {
	if v < 1 {
		return &ValidationError{Type: p.EventType(), Field: field, Reason: strconv.Itoa(v) + " is not a step number; steps count from 1"}
	}
	return nil
}

func fraction(p Payload, v float64) error {
	if math.IsNaN(v) || v < 0 || v > 1 {
		return &ValidationError{Type: p.EventType(), Field: "progress", Reason: strconv.FormatFloat(v, 'g', -1, 64) + " is outside 0..1; report the completed fraction"}
	}
	return nil
}

// SupervisorThinking is the payload of [TypeSupervisorThinking].
type SupervisorThinking struct {
	Message string `json:"message"`
}

// SupervisorDecided is the payload of [TypeSupervisorDecided].
type SupervisorDecided struct {
	Action  string `json:"action"`
	Message string `json:"message,omitempty"`
}

// ResponseChunk is the payload of [TypeResponseChunk].
type ResponseChunk struct {
	Content string `json:"content"`
}

// ResponseDone is the payload of [TypeResponseDone].
type ResponseDone struct{}

// ClarifyRequest is the payload of [TypeClarifyRequest].
type ClarifyRequest struct {
	Question string   `json:"question"`
	Options  []string `json:"options,omitempty"`
}

// TokenUsage is the payload of [TypeTokenUsage].
type TokenUsage struct {
	Model            string `json:"model,omitempty"`
	InputTokens      int    `json:"input_tokens"`
	OutputTokens     int    `json:"output_tokens"`
	ThinkingTokens   int    `json:"thinking_tokens"`
	CacheReadTokens  int    `json:"cache_read_tokens"`
	CacheWriteTokens int    `json:"cache_write_tokens"`
	TotalTokens      int    `json:"total_tokens"`
}

// EventType returns [TypeSupervisorThinking].
func (SupervisorThinking) EventType() Type { return TypeSupervisorThinking }

// EventType returns [TypeSupervisorDecided].
func (SupervisorDecided) EventType() Type { return TypeSupervisorDecided }

// EventType returns [TypeResponseChunk].
func (ResponseChunk) EventType() Type { return TypeResponseChunk }

// EventType returns [TypeResponseDone].
func (ResponseDone) EventType() Type { return TypeResponseDone }

// EventType returns [TypeClarifyRequest].
func (ClarifyRequest) EventType() Type { return TypeClarifyRequest }

// EventType returns [TypeTokenUsage].
func (TokenUsage) EventType() Type { return TypeTokenUsage }

// Validate implements [Validator].
func (p ClarifyRequest) Validate() error { return required(p, "question", p.Question) }

// interim decodes the catalogue while it lives here: a nil *Decoder and
// Event.UnmarshalJSON use it.
var interim = func() *Decoder {
	d := NewDecoder()
	Register[SupervisorThinking](d)
	Register[SupervisorDecided](d)
	Register[ToolStart](d)
	Register[ToolProgress](d)
	Register[ToolContent](d)
	Register[ToolComplete](d)
	Register[ToolError](d)
	Register[MCPProgress](d)
	Register[MCPContent](d)
	Register[MCPElicitation](d)
	Register[MCPError](d)
	Register[WorkflowCreated](d)
	Register[WorkflowStepStart](d)
	Register[WorkflowStepComplete](d)
	Register[WorkflowComplete](d)
	Register[ResponseChunk](d)
	Register[ResponseDone](d)
	Register[DirectResponse](d)
	Register[DirectResponseStart](d)
	Register[DirectResponseChunk](d)
	Register[DirectResponseDone](d)
	Register[ElicitationRequest](d)
	Register[ElicitationResponse](d)
	Register[ClarifyRequest](d)
	Register[TokenUsage](d)
	return d
}()
