package chatevent

import (
	"io"
	"iter"
	"math"
	"strconv"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/sse"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// The chat protocol's event types.
const (
	// TypeSupervisorThinking: the supervisor is deciding what to do next.
	TypeSupervisorThinking event.Type = "supervisor.thinking"
	// TypeSupervisorDecided: the supervisor chose an action.
	TypeSupervisorDecided event.Type = "supervisor.decided"

	// TypeToolStart: a tool or operator started.
	TypeToolStart event.Type = "tool.start"
	// TypeToolProgress: a running tool reported progress. Coalescable.
	TypeToolProgress event.Type = "tool.progress"
	// TypeToolContent: a tool produced a content item (text, image, widget).
	TypeToolContent event.Type = "tool.content"
	// TypeToolComplete: a tool finished successfully.
	TypeToolComplete event.Type = "tool.complete"
	// TypeToolError: a tool failed.
	TypeToolError event.Type = "tool.error"

	// TypeWorkflowCreated: the supervisor planned a multi-step workflow.
	TypeWorkflowCreated event.Type = "workflow.created"
	// TypeWorkflowStepStart: a workflow step started.
	TypeWorkflowStepStart event.Type = "workflow.step.start"
	// TypeWorkflowStepComplete: a workflow step finished.
	TypeWorkflowStepComplete event.Type = "workflow.step.complete"
	// TypeWorkflowComplete: every step of the workflow finished.
	TypeWorkflowComplete event.Type = "workflow.complete"

	// TypeResponseChunk: a piece of the final answer, streamed by the writer.
	TypeResponseChunk event.Type = "response.chunk"
	// TypeResponseDone: the final answer is complete. Terminal.
	TypeResponseDone event.Type = "response.done"

	// TypeDirectResponse: an operator sent a complete answer straight to the
	// user, bypassing the writer.
	TypeDirectResponse event.Type = "direct.response"
	// TypeDirectResponseStart: an operator starts streaming a direct answer.
	TypeDirectResponseStart event.Type = "direct.response.start"
	// TypeDirectResponseChunk: a piece of a direct answer.
	TypeDirectResponseChunk event.Type = "direct.response.chunk"
	// TypeDirectResponseDone: the direct answer is complete.
	TypeDirectResponseDone event.Type = "direct.response.done"

	// TypeElicitationRequest: a tool or operator needs input from the user.
	TypeElicitationRequest event.Type = "elicitation.request"
	// TypeElicitationResponse: the user answered (or declined) an elicitation.
	TypeElicitationResponse event.Type = "elicitation.response"

	// TypeClarifyRequest: the supervisor asks the user to clarify. Terminal.
	TypeClarifyRequest event.Type = "clarify.request"

	// TypeTokenUsage reports the language-model tokens a turn spent.
	TypeTokenUsage event.Type = "token.usage"
)

// Terminal reports whether ev ends the user-visible part of a turn:
// response.done (the answer is complete) or clarify.request (the user has
// to answer first). An error event is not terminal: a turn may report an
// error and go on, and a stream reports lost events with one; a turn that
// fails reports an error and then ends its stream.
func Terminal(t event.Type) bool { return t == TypeResponseDone || t == TypeClarifyRequest }

// Error types carried by [ToolError.ErrorType].
const (
	ErrorTimeout    = "timeout"
	ErrorConnection = "connection"
	ErrorExecution  = "execution"
	ErrorValidation = "validation"
)

// SupervisorThinking is the payload of [TypeSupervisorThinking].
type SupervisorThinking struct {
	Message string `json:"message"`
}

// SupervisorDecided is the payload of [TypeSupervisorDecided].
type SupervisorDecided struct {
	// Action is the supervisor's choice: "answer", "call_tool", "workflow"
	// or "clarify".
	Action  string `json:"action"`
	Message string `json:"message,omitempty"`
}

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
	// (usually an object) for widgets and JSON content. Decoding gives a
	// string, or map[string]any and the like.
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

// ResponseChunk is the payload of [TypeResponseChunk].
type ResponseChunk struct {
	Content string `json:"content"`
}

// ResponseDone is the payload of [TypeResponseDone].
type ResponseDone struct{}

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
// the user answers through the chatbot's elicitation endpoint. It is the
// question the SDK reports (elicit.Request), whose fields are
// its JSON: elicitation_id, tool, message, options and schema (and server,
// mode and url when set).
type ElicitationRequest struct {
	elicit.Request
}

// ElicitationResponse is the payload of [TypeElicitationResponse]: the
// user's answer to an [ElicitationRequest]. It is the answer the SDK takes
// (elicit.Response), whose fields are its JSON:
// elicitation_id, action (elicit.Accept, Decline or Cancel) and content.
type ElicitationResponse struct {
	elicit.Response
}

// ClarifyRequest is the payload of [TypeClarifyRequest].
type ClarifyRequest struct {
	Question string   `json:"question"`
	Options  []string `json:"options,omitempty"`
}

// TokenUsage is the payload of [TypeTokenUsage]: the tokens of a turn's
// model calls, as [model.Usage] encodes them (with total_tokens).
type TokenUsage struct {
	model.Usage
}

// EventType returns [TypeSupervisorThinking].
func (SupervisorThinking) EventType() event.Type { return TypeSupervisorThinking }

// EventType returns [TypeSupervisorDecided].
func (SupervisorDecided) EventType() event.Type { return TypeSupervisorDecided }

// EventType returns [TypeToolStart].
func (ToolStart) EventType() event.Type { return TypeToolStart }

// EventType returns [TypeToolProgress].
func (ToolProgress) EventType() event.Type { return TypeToolProgress }

// EventType returns [TypeToolContent].
func (ToolContent) EventType() event.Type { return TypeToolContent }

// EventType returns [TypeToolComplete].
func (ToolComplete) EventType() event.Type { return TypeToolComplete }

// EventType returns [TypeToolError].
func (ToolError) EventType() event.Type { return TypeToolError }

// EventType returns [TypeWorkflowCreated].
func (WorkflowCreated) EventType() event.Type { return TypeWorkflowCreated }

// EventType returns [TypeWorkflowStepStart].
func (WorkflowStepStart) EventType() event.Type { return TypeWorkflowStepStart }

// EventType returns [TypeWorkflowStepComplete].
func (WorkflowStepComplete) EventType() event.Type { return TypeWorkflowStepComplete }

// EventType returns [TypeWorkflowComplete].
func (WorkflowComplete) EventType() event.Type { return TypeWorkflowComplete }

// EventType returns [TypeResponseChunk].
func (ResponseChunk) EventType() event.Type { return TypeResponseChunk }

// EventType returns [TypeResponseDone].
func (ResponseDone) EventType() event.Type { return TypeResponseDone }

// EventType returns [TypeDirectResponse].
func (DirectResponse) EventType() event.Type { return TypeDirectResponse }

// EventType returns [TypeDirectResponseStart].
func (DirectResponseStart) EventType() event.Type { return TypeDirectResponseStart }

// EventType returns [TypeDirectResponseChunk].
func (DirectResponseChunk) EventType() event.Type { return TypeDirectResponseChunk }

// EventType returns [TypeDirectResponseDone].
func (DirectResponseDone) EventType() event.Type { return TypeDirectResponseDone }

// EventType returns [TypeElicitationRequest].
func (ElicitationRequest) EventType() event.Type { return TypeElicitationRequest }

// EventType returns [TypeElicitationResponse].
func (ElicitationResponse) EventType() event.Type { return TypeElicitationResponse }

// EventType returns [TypeClarifyRequest].
func (ClarifyRequest) EventType() event.Type { return TypeClarifyRequest }

// EventType returns [TypeTokenUsage].
func (TokenUsage) EventType() event.Type { return TypeTokenUsage }

// CoalesceKey returns the tool: a newer progress report of the same tool
// replaces a queued one when the client falls behind.
func (p ToolProgress) CoalesceKey() string { return p.Tool }

// Validate checks that the tool is named.
func (p ToolStart) Validate() error { return required(p, "tool", p.Tool) }

// Validate checks the tool and that the progress is a fraction.
func (p ToolProgress) Validate() error {
	if err := required(p, "tool", p.Tool); err != nil {
		return err
	}
	if math.IsNaN(p.Progress) || p.Progress < 0 || p.Progress > 1 {
		return &event.ValidationError{Type: p.EventType(), Field: "progress", Reason: strconv.FormatFloat(p.Progress, 'g', -1, 64) + " is outside 0..1; report the completed fraction"}
	}
	return nil
}

// Validate checks that the content type is set.
func (p ToolContent) Validate() error { return required(p, "content_type", p.ContentType) }

// Validate checks that the tool is named.
func (p ToolComplete) Validate() error { return required(p, "tool", p.Tool) }

// Validate checks that the tool is named.
func (p ToolError) Validate() error { return required(p, "tool", p.Tool) }

// Validate checks that the step is numbered.
func (p WorkflowStepStart) Validate() error { return positive(p, "step", p.Step) }

// Validate checks the step number and the status.
func (p WorkflowStepComplete) Validate() error {
	if err := positive(p, "step", p.Step); err != nil {
		return err
	}
	switch p.Status {
	case "", StepFailed, StepSkipped:
		return nil
	}
	return &event.ValidationError{Type: p.EventType(), Field: "status", Reason: strconv.Quote(p.Status) + " is not one of \"\" (succeeded), failed, skipped"}
}

// Validate checks that the elicitation is identified.
func (p ElicitationRequest) Validate() error {
	return required(p, "elicitation_id", p.ElicitationID)
}

// Validate checks the elicitation id and the action.
func (p ElicitationResponse) Validate() error {
	if err := required(p, "elicitation_id", p.ElicitationID); err != nil {
		return err
	}
	if p.Action.Valid() {
		return nil
	}
	return &event.ValidationError{Type: p.EventType(), Field: "action", Reason: strconv.Quote(string(p.Action)) + " is not one of accept, decline, cancel"}
}

// Validate checks that the question is set.
func (p ClarifyRequest) Validate() error { return required(p, "question", p.Question) }

func required(p event.Payload, field, v string) error {
	if v == "" {
		return &event.ValidationError{Type: p.EventType(), Field: field, Reason: "is empty; set it"}
	}
	return nil
}

func positive(p event.Payload, field string, v int) error {
	if v < 1 {
		return &event.ValidationError{Type: p.EventType(), Field: field, Reason: strconv.Itoa(v) + " is not a step number; steps count from 1"}
	}
	return nil
}

// NewDecoder returns a decoder that gives back the catalogue's payload
// structs (and event.Error); other types decode as [event.Raw].
func NewDecoder() *event.Decoder {
	d := event.NewDecoder()
	event.Register[SupervisorThinking](d)
	event.Register[SupervisorDecided](d)
	event.Register[ToolStart](d)
	event.Register[ToolProgress](d)
	event.Register[ToolContent](d)
	event.Register[ToolComplete](d)
	event.Register[ToolError](d)
	event.Register[WorkflowCreated](d)
	event.Register[WorkflowStepStart](d)
	event.Register[WorkflowStepComplete](d)
	event.Register[WorkflowComplete](d)
	event.Register[ResponseChunk](d)
	event.Register[ResponseDone](d)
	event.Register[DirectResponse](d)
	event.Register[DirectResponseStart](d)
	event.Register[DirectResponseChunk](d)
	event.Register[DirectResponseDone](d)
	event.Register[ElicitationRequest](d)
	event.Register[ElicitationResponse](d)
	event.Register[ClarifyRequest](d)
	event.Register[TokenUsage](d)
	return d
}

// ReadEvents reads a chat stream (the body of POST /api/v1/chat or of a
// resumed stream) and decodes its events with [NewDecoder].
func ReadEvents(r io.Reader) iter.Seq2[event.Event, error] {
	return sse.Reader{Decoder: NewDecoder()}.ReadEvents(r)
}
