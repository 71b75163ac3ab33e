// Package eventtest defines the payloads the tests of event and its
// subpackages emit, encode and decode: a small catalogue of an imaginary
// application that runs tools and streams text.
package eventtest

import (
	"math"
	"strconv"

	"github.com/agentgraph/agentgraph/event"
)

// The catalogue's types.
const (
	TypeNote           event.Type = "note"
	TypeToolStart      event.Type = "tool.start"
	TypeToolProgress   event.Type = "tool.progress"
	TypeToolContent    event.Type = "tool.content"
	TypeToolComplete   event.Type = "tool.complete"
	TypeToolError      event.Type = "tool.error"
	TypeServerProgress event.Type = "server.progress"
	TypeServerError    event.Type = "server.error"
	TypeStepStart      event.Type = "step.start"
	TypeChunk          event.Type = "text.chunk"
	TypeDone           event.Type = "text.done"
	TypeQuestion       event.Type = "question"
	TypeUsage          event.Type = "usage"
)

// Note is a message without structure.
type Note struct {
	Message string `json:"message"`
}

// ToolStart: a tool started.
type ToolStart struct {
	Tool    string `json:"tool"`
	Message string `json:"message,omitempty"`
}

// ToolProgress: a tool's completed fraction. Coalescable by tool.
type ToolProgress struct {
	Tool     string  `json:"tool"`
	Progress float64 `json:"progress"`
	Message  string  `json:"message,omitempty"`
}

// ToolContent: one content item of a tool's result.
type ToolContent struct {
	Tool        string         `json:"tool,omitempty"`
	ContentType string         `json:"content_type"`
	Encoding    string         `json:"encoding,omitempty"`
	Data        any            `json:"data"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// ToolComplete: a tool finished.
type ToolComplete struct {
	Tool         string `json:"tool"`
	ContentCount int    `json:"content_count"`
}

// ToolError: a tool failed.
type ToolError struct {
	Tool      string `json:"tool"`
	Error     string `json:"error"`
	ErrorType string `json:"error_type,omitempty"`
}

// ServerProgress: a server's progress on a tool. Coalescable by server
// and tool.
type ServerProgress struct {
	Server   string  `json:"server"`
	Tool     string  `json:"tool"`
	Progress float64 `json:"progress"`
	Message  string  `json:"message,omitempty"`
}

// ServerError: a server's tool failed.
type ServerError struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Error  string `json:"error"`
}

// StepStart: a numbered step started.
type StepStart struct {
	Step int    `json:"step"`
	Name string `json:"name"`
}

// Chunk is a piece of streamed text.
type Chunk struct {
	Content string `json:"content"`
}

// Done: the text is complete.
type Done struct{}

// Question asks for one of Options.
type Question struct {
	ID      string   `json:"id"`
	Text    string   `json:"text"`
	Options []string `json:"options,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// EventType returns [TypeNote].
func (Note) EventType() event.Type { return TypeNote }

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

// EventType returns [TypeServerProgress].
func (ServerProgress) EventType() event.Type { return TypeServerProgress }

// EventType returns [TypeServerError].
func (ServerError) EventType() event.Type { return TypeServerError }

// EventType returns [TypeStepStart].
func (StepStart) EventType() event.Type { return TypeStepStart }

// EventType returns [TypeChunk].
func (Chunk) EventType() event.Type { return TypeChunk }

// EventType returns [TypeDone].
func (Done) EventType() event.Type { return TypeDone }

// EventType returns [TypeQuestion].
func (Question) EventType() event.Type { return TypeQuestion }

// EventType returns [TypeUsage].
func (Usage) EventType() event.Type { return TypeUsage }

// Validate requires the tool.
func (p ToolStart) Validate() error { return required(p, "tool", p.Tool) }

// Validate requires the tool and a fraction in 0..1.
func (p ToolProgress) Validate() error {
	if err := required(p, "tool", p.Tool); err != nil {
		return err
	}
	return fraction(p, p.Progress)
}

// Validate requires the content type.
func (p ToolContent) Validate() error { return required(p, "content_type", p.ContentType) }

// Validate requires the tool.
func (p ToolComplete) Validate() error { return required(p, "tool", p.Tool) }

// Validate requires the tool.
func (p ToolError) Validate() error { return required(p, "tool", p.Tool) }

// Validate requires the server, the tool and a fraction in 0..1.
func (p ServerProgress) Validate() error {
	if err := required(p, "server", p.Server); err != nil {
		return err
	}
	if err := required(p, "tool", p.Tool); err != nil {
		return err
	}
	return fraction(p, p.Progress)
}

// Validate requires a step number from 1.
func (p StepStart) Validate() error {
	if p.Step < 1 {
		return &event.ValidationError{Type: p.EventType(), Field: "step", Reason: strconv.Itoa(p.Step) + " is not a step number; steps count from 1"}
	}
	return nil
}

// Validate requires the id.
func (p Question) Validate() error { return required(p, "id", p.ID) }

// CoalesceKey returns the tool.
func (p ToolProgress) CoalesceKey() string { return p.Tool }

// CoalesceKey returns the server and the tool.
func (p ServerProgress) CoalesceKey() string { return p.Server + "/" + p.Tool }

func required(p event.Payload, field, v string) error {
	if v == "" {
		return &event.ValidationError{Type: p.EventType(), Field: field, Reason: "is empty; set it"}
	}
	return nil
}

func fraction(p event.Payload, v float64) error {
	if math.IsNaN(v) || v < 0 || v > 1 {
		return &event.ValidationError{Type: p.EventType(), Field: "progress", Reason: strconv.FormatFloat(v, 'g', -1, 64) + " is outside 0..1; report the completed fraction"}
	}
	return nil
}

// Decoder returns a decoder that knows the catalogue.
func Decoder() *event.Decoder {
	d := event.NewDecoder()
	event.Register[Note](d)
	event.Register[ToolStart](d)
	event.Register[ToolProgress](d)
	event.Register[ToolContent](d)
	event.Register[ToolComplete](d)
	event.Register[ToolError](d)
	event.Register[ServerProgress](d)
	event.Register[ServerError](d)
	event.Register[StepStart](d)
	event.Register[Chunk](d)
	event.Register[Done](d)
	event.Register[Question](d)
	event.Register[Usage](d)
	return d
}
