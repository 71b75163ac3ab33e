package model

import (
	"encoding/json"
	"strings"
)

// Role says who wrote a [Message].
type Role string

// The roles of a conversation.
const (
	// RoleSystem is the instructions that frame the conversation.
	RoleSystem Role = "system"
	// RoleUser is the person (or program) the model answers.
	RoleUser Role = "user"
	// RoleAssistant is the model: its text, thinking and tool calls.
	RoleAssistant Role = "assistant"
	// RoleTool carries the results of the assistant's tool calls.
	RoleTool Role = "tool"
)

// Message is one entry of a conversation.
//
// A message is a list of [Part]s, so one assistant message can hold thinking,
// text and several tool calls, and one tool message the results of every call
// of the previous assistant message. ID identifies the message within its
// conversation: a messages reducer replaces or removes messages by it.
// Messages are plain values that encode to JSON, so they can be kept in graph
// state and checkpoints.
type Message struct {
	// ID identifies the message in its conversation. Empty until a
	// reducer or a store assigns one.
	ID string `json:"id,omitempty"`
	// Role says who wrote the message.
	Role Role `json:"role"`
	// Name optionally names the author, such as an agent of a team.
	Name string `json:"name,omitempty"`
	// Parts is the message's content in order.
	Parts []Part `json:"parts"`
}

// System returns a system message holding text.
func System(text string) Message { return Message{Role: RoleSystem, Parts: []Part{TextPart(text)}} }

// User returns a user message holding text.
func User(text string) Message { return Message{Role: RoleUser, Parts: []Part{TextPart(text)}} }

// Assistant returns an assistant message holding text.
func Assistant(text string) Message {
	return Message{Role: RoleAssistant, Parts: []Part{TextPart(text)}}
}

// ToolResults returns the tool message that answers the given calls' results.
func ToolResults(results ...ToolResult) Message {
	m := Message{Role: RoleTool, Parts: make([]Part, len(results))}
	for i := range results {
		r := results[i]
		m.Parts[i] = Part{Kind: PartToolResult, ToolResult: &r}
	}
	return m
}

// Text returns the concatenated text parts of m, without thinking.
func (m Message) Text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Kind == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Thinking returns the concatenated thinking parts of m.
func (m Message) Thinking() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Kind == PartThinking {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ToolCalls returns the tool calls of m in order.
func (m Message) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, p := range m.Parts {
		if p.Kind == PartToolCall && p.ToolCall != nil {
			calls = append(calls, *p.ToolCall)
		}
	}
	return calls
}

// PartKind says what a [Part] holds.
type PartKind string

// The kinds of part.
const (
	// PartText is text: Text.
	PartText PartKind = "text"
	// PartBinary is binary data such as an image: MIMEType with Data or URL.
	PartBinary PartKind = "binary"
	// PartThinking is the model's reasoning: Text, and Signature when the
	// provider signs it.
	PartThinking PartKind = "thinking"
	// PartToolCall is a call the model asks for: ToolCall.
	PartToolCall PartKind = "tool_call"
	// PartToolResult is the result of a call: ToolResult.
	PartToolResult PartKind = "tool_result"
)

// Part is one piece of a [Message]. Kind says which fields are set.
type Part struct {
	// Kind says what the part holds.
	Kind PartKind `json:"kind"`
	// Text is the text of a PartText or PartThinking part.
	Text string `json:"text,omitempty"`
	// Signature is the provider's opaque signature of a PartThinking part.
	// Providers that sign thinking (Anthropic) require it back, unchanged,
	// when the conversation continues after a tool call.
	Signature string `json:"signature,omitempty"`
	// Redacted is true for thinking the provider returned encrypted; Text
	// then holds the provider's opaque data and must be sent back as is.
	Redacted bool `json:"redacted,omitempty"`
	// MIMEType is the type of a PartBinary part, such as "image/png".
	MIMEType string `json:"mime_type,omitempty"`
	// Data is the content of a PartBinary part given inline.
	Data []byte `json:"data,omitempty"`
	// URL is the address of a PartBinary part given by reference.
	URL string `json:"url,omitempty"`
	// ToolCall is the call of a PartToolCall part.
	ToolCall *ToolCall `json:"tool_call,omitempty"`
	// ToolResult is the result of a PartToolResult part.
	ToolResult *ToolResult `json:"tool_result,omitempty"`
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Kind: PartText, Text: text} }

// ThinkingPart returns a thinking part with the provider's signature, if any.
func ThinkingPart(text, signature string) Part {
	return Part{Kind: PartThinking, Text: text, Signature: signature}
}

// BinaryPart returns a binary part holding data of the given MIME type.
func BinaryPart(mimeType string, data []byte) Part {
	return Part{Kind: PartBinary, MIMEType: mimeType, Data: data}
}

// ToolCallPart returns a part asking for call.
func ToolCallPart(call ToolCall) Part { return Part{Kind: PartToolCall, ToolCall: &call} }

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	// ID identifies the call; its result names it in ToolResult.CallID.
	ID string `json:"id"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Arguments is the JSON object of arguments the model wrote. It is what
	// the model sent, which may be invalid: a tool validates it.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ToolResult is what a tool returned for one [ToolCall]: the answer a model
// reads and, for programs, the structured value. It is a message part, in
// the model's terms (text and binary parts). A tool's output for programs
// and user interfaces, with items a model does not read (widgets, JSON
// values, per-item metadata), is toolresult.Result (package
// operator/toolresult); its ModelResult method is the one conversion from
// that to this.
type ToolResult struct {
	// CallID is the ID of the call this result answers.
	CallID string `json:"call_id"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Content is the result as the model reads it: text and binary parts.
	Content []Part `json:"content,omitempty"`
	// Structured is the result as a JSON value, when the tool has one.
	Structured json.RawMessage `json:"structured,omitempty"`
	// IsError is true when the call failed: Content says why, in words the
	// model can act on (fix its arguments, try another tool).
	IsError bool `json:"is_error,omitempty"`
}

// Text returns the concatenated text parts of r's content.
func (r ToolResult) Text() string {
	var b strings.Builder
	for _, p := range r.Content {
		if p.Kind == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ImageType returns the MIME type of data when its bytes are an image of a
// type model providers accept in a message: image/png, image/jpeg,
// image/gif or image/webp (by their signatures, as http.DetectContentType
// tells them). It returns false for anything else: a binary part holding
// other data (audio, a PDF, text claiming to be an image) would be sent as
// an image the provider rejects or misreads.
func ImageType(data []byte) (string, bool) {
	s := string(data[:min(len(data), 16)])
	switch {
	case strings.HasPrefix(s, "\x89PNG\r\n\x1a\n"):
		return "image/png", true
	case strings.HasPrefix(s, "\xff\xd8\xff"):
		return "image/jpeg", true
	case strings.HasPrefix(s, "GIF87a"), strings.HasPrefix(s, "GIF89a"):
		return "image/gif", true
	case len(s) >= 14 && s[:4] == "RIFF" && s[8:14] == "WEBPVP":
		return "image/webp", true
	}
	return "", false
}
