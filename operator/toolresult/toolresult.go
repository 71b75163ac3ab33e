// Package toolresult defines the result of a tool call as programs and user
// interfaces see it, whatever served the call: a local Go function, an
// operator or an MCP server.
//
// A [Result] is a list of [Content] items (text, images, audio, embedded
// resources, links to resources, widgets, JSON values), the tool's
// structured output, whether the tool reported a failure, and where and how
// long it ran. Items can be what a model does not read (widgets, JSON
// values) and carry metadata for a user interface.
//
// The part of a model message that holds a tool's answer is a different
// thing, model.ToolResult: [Result.ModelResult] is the conversion to it.
//
// The package imports only the standard library and agent/model, so that
// the MCP client (package mcp) and the operator layer (package operator)
// share it without depending on each other.
package toolresult

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
)

// MIME types with a meaning of their own. An item may have any MIME type.
const (
	// MIMEText is the type of a plain-text item, and of a text item
	// without a type.
	MIMEText = "text/plain"
	// MIMEJSON marks a JSON item; its Value is the decoded JSON.
	MIMEJSON = "application/json"
	// MIMEWidget marks a widget item; its Value is a [Widget] (or the
	// decoded JSON of one) and, from an MCP server, Text is its JSON.
	MIMEWidget = "application/vnd.mcp.widget+json"
	// MIMEBinary is the type of a binary item whose server gave none.
	MIMEBinary = "application/octet-stream"
)

// Kind says which MCP content block an item came from. Items made by local
// tools and operators may leave it empty: their MIME type says what they
// are.
type Kind string

// The item kinds. KindStructured is an MCP result's structuredContent;
// KindWidget is any MCP item whose MIME type is [MIMEWidget].
const (
	KindText         Kind = "text"
	KindImage        Kind = "image"
	KindAudio        Kind = "audio"
	KindResource     Kind = "resource"
	KindResourceLink Kind = "resource_link"
	KindStructured   Kind = "structured"
	KindWidget       Kind = "widget"
)

// Content is one item of a result: text, an image, audio, an embedded
// resource, a link to a resource, a widget or a JSON value.
//
// Text items carry Text; binary items (images, audio, blob resources) carry
// base64 Data; widget and JSON items carry their value in Value (and, from
// an MCP server, its JSON encoding in Text).
type Content struct {
	// Kind is the MCP content block the item came from, or empty.
	Kind Kind `json:"kind,omitempty"`
	// MIMEType is the item's type ("text/plain", "text/markdown",
	// "image/png", MIMEWidget, MIMEJSON). Empty means "text/plain".
	MIMEType string `json:"mime_type,omitempty"`
	// Text is the text of a text item or a text resource, the description
	// of a resource link, or the JSON of a structured or widget item from
	// an MCP server.
	Text string `json:"text,omitempty"`
	// Data is the base64 data of a binary item (image, audio, blob).
	Data string `json:"data,omitempty"`
	// URI and Name identify resources and resource links.
	URI  string `json:"uri,omitempty"`
	Name string `json:"name,omitempty"`
	// Value is the value of a widget or JSON item.
	Value any `json:"value,omitempty"`
	// AltText describes an image or audio item for those who cannot see
	// or hear it, or is empty. From an MCP server it is the "alt_text"
	// string of the item's _meta.
	AltText string `json:"alt_text,omitempty"`
	// Metadata holds optional details: a title, an MCP item's annotations
	// (audience, priority) and _meta.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// TextContent returns a text/plain item.
func TextContent(text string) Content { return Content{MIMEType: MIMEText, Text: text} }

// IsText reports whether c is a text item: one of any text/* MIME type, or
// one with no MIME type whose Kind is empty or KindText.
func (c Content) IsText() bool {
	if c.MIMEType == "" {
		return c.Kind == "" || c.Kind == KindText
	}
	return strings.HasPrefix(c.MIMEType, "text/")
}

// IsImage reports whether c is an image.
func (c Content) IsImage() bool { return strings.HasPrefix(c.MIMEType, "image/") }

// IsWidget reports whether c is a widget.
func (c Content) IsWidget() bool { return c.MIMEType == MIMEWidget }

// Bytes returns the item's payload: the decoded base64 Data of a binary
// item, else the Text. Data is standard base64, padded or not.
func (c Content) Bytes() ([]byte, error) {
	if c.Data == "" {
		return []byte(c.Text), nil
	}
	b, err := base64.StdEncoding.DecodeString(c.Data)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(c.Data); err != nil {
			return nil, fmt.Errorf("toolresult: item %s: data is not valid base64: %w", c.MIMEType, err)
		}
	}
	return b, nil
}

// Widget is an interactive component for a user interface to render: the
// Value of a [MIMEWidget] item.
type Widget struct {
	// Type is the widget kind: "data_table", "chart", "form", "code_editor",
	// "map", or one the client knows.
	Type    string           `json:"widget_type"`
	Title   string           `json:"title,omitempty"`
	Data    map[string]any   `json:"data,omitempty"`
	Actions []map[string]any `json:"actions,omitempty"`
}

// Result is the result of one tool call.
type Result struct {
	// Tool is the name the tool was called by.
	Tool string `json:"tool"`
	// Server is the MCP server that served the call, or empty for a tool
	// that is not an MCP server's.
	Server string `json:"server,omitempty"`
	// Contents lists the result's items in order. A result an MCP session
	// returns (mcp.Session.CallTool) lists a structuredContent object
	// last, as a KindStructured item holding the server's JSON in Text, so
	// that its key order survives; the operator layer's results keep
	// structured output in Structured only.
	Contents []Content `json:"contents"`
	// Structured is the tool's structured output, decoded, or nil.
	Structured any `json:"structured,omitempty"`
	// IsError is true when the tool reported a failure in its result
	// (MCP isError) rather than failing to run, or, beside an error, when
	// the call failed; Error says what.
	IsError bool   `json:"is_error,omitempty"`
	Error   string `json:"error,omitempty"`
	// Direct is true when the tool (an operator, or a local tool through
	// its messenger) already answered the user with a direct response:
	// the caller should not write another answer.
	Direct bool `json:"direct,omitempty"`
	// Duration is how long an MCP call took, or zero.
	Duration time.Duration `json:"duration,omitempty"`
	// Metadata holds optional details, such as an MCP result's _meta.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Text joins the text items with newlines.
func (r *Result) Text() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	n := 0
	for _, c := range r.Contents {
		if !c.IsText() {
			continue
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
		n++
	}
	return b.String()
}

// Value returns the structured output when there is one, else the text.
func (r *Result) Value() any {
	if r == nil {
		return nil
	}
	if r.Structured != nil {
		return r.Structured
	}
	return r.Text()
}

// Part returns c as a part of a model message:
//
//   - a text item is text;
//   - an item with base64 Data is binary data only when it is an image
//     models read: one that claims an image type and whose bytes are a
//     PNG, JPEG, GIF or WebP image ([model.ImageType]), passed on with the
//     type its bytes have ("image/jpg" becomes "image/jpeg"). Any other (audio, a PDF or other blob, bytes
//     that are not the image they claim to be, data that is not valid
//     base64) is a short text note naming its type and size, as
//     "[audio/wav, 1024 bytes, not shown]", and its AltText if any: a
//     model provider would otherwise take it for an image;
//   - an MCP text resource is text that names its URI and MIME type;
//   - an MCP resource link is text naming the link;
//   - an MCP widget is text holding its JSON, naming its URI;
//   - another widget or JSON item is the JSON text of its Value.
func (c Content) Part() model.Part {
	switch {
	case c.Kind == KindWidget:
		return model.TextPart(fmt.Sprintf("Widget %s:\n%s", c.URI, c.jsonText()))
	case c.Kind == KindResourceLink:
		return model.TextPart(c.linkText())
	case c.Data != "":
		data, err := c.Bytes()
		if err != nil {
			return model.TextPart(c.note("data that is not valid base64"))
		}
		claimsImage := strings.HasPrefix(strings.ToLower(c.MIMEType), "image/")
		if mt, ok := model.ImageType(data); ok && claimsImage {
			return model.BinaryPart(mt, data)
		}
		if claimsImage || c.Kind == KindImage {
			return model.TextPart(c.note(fmt.Sprintf("%d bytes that are not a PNG, JPEG, GIF or WebP image, not shown", len(data))))
		}
		return model.TextPart(c.note(fmt.Sprintf("%d bytes, not shown", len(data))))
	case c.Kind == KindResource:
		return model.TextPart(fmt.Sprintf("Resource %s (%s):\n%s", c.URI, c.MIMEType, c.Text))
	case c.IsText() || c.Value == nil:
		return model.TextPart(c.Text)
	}
	return model.TextPart(c.jsonText())
}

// note is the text that stands for a binary item a model is not shown:
// "[type, what]", with the item's URI (a resource) and AltText.
func (c Content) note(what string) string {
	var b strings.Builder
	mt := c.MIMEType
	if mt == "" {
		mt = MIMEBinary
	}
	b.WriteString("[" + mt)
	if c.URI != "" {
		b.WriteString(" " + c.URI)
	}
	b.WriteString(", " + what + "]")
	if c.AltText != "" {
		b.WriteString(" " + c.AltText)
	}
	return b.String()
}

// jsonText is the JSON of a widget or JSON item: its Text when it has one
// (an MCP server's own encoding), else its Value encoded (a string Value as
// it is).
func (c Content) jsonText() string {
	if c.Text != "" || c.Value == nil {
		return c.Text
	}
	if s, ok := c.Value.(string); ok {
		return s
	}
	b, err := json.Marshal(c.Value)
	if err != nil {
		return fmt.Sprint(c.Value)
	}
	return string(b)
}

// linkText describes a resource link for a model.
func (c Content) linkText() string {
	var b strings.Builder
	b.WriteString("Resource link: ")
	if c.Name != "" {
		b.WriteString(c.Name + " ")
	}
	b.WriteString("<" + c.URI + ">")
	if c.MIMEType != "" {
		b.WriteString(" (" + c.MIMEType + ")")
	}
	if c.Text != "" {
		b.WriteString(": " + c.Text)
	}
	return b.String()
}

// ModelResult returns r as a model's tool result: its items as parts (see
// [Content.Part]), its structured output as JSON, and its failure as
// IsError, with Error as the first text when no text item says it. CallID
// is left empty and Name is r.Tool. A nil r is an empty result.
//
// The structured output of an MCP server's result is the server's own
// JSON (its KindStructured item), and it is also a text part when no other
// part is text, so that the model reads it (as the MCP specification asks
// of servers that return structured content).
//
// Structured output that cannot go to the model (JSON that is not valid
// or nests too deep, a value such as NaN that JSON cannot encode) is not
// dropped silently: with text parts beside it, a note says it is not
// shown; without, the result is an error (IsError) whose text names the
// problem, rather than an empty success.
func (r *Result) ModelResult() *model.ToolResult {
	if r == nil {
		return &model.ToolResult{}
	}
	out := &model.ToolResult{Name: r.Tool, IsError: r.IsError}
	var raw string
	mcpStructured, hasText := false, false
	for _, c := range r.Contents {
		if c.Kind == KindStructured {
			raw, mcpStructured = c.Text, true
			continue
		}
		p := c.Part()
		out.Content = append(out.Content, p)
		hasText = hasText || p.Kind == model.PartText
	}
	if r.IsError && r.Error != "" && r.Text() == "" {
		out.Content = append([]model.Part{model.TextPart(r.Error)}, out.Content...)
		hasText = true
	}
	var unusable string // why the structured output cannot go to the model
	switch {
	case raw != "":
		if json.Valid([]byte(raw)) {
			out.Structured = json.RawMessage(raw)
		} else {
			unusable = fmt.Sprintf("is not valid JSON (or nests deeper than JSON decoders accept), %d bytes", len(raw))
		}
	case r.Structured != nil:
		if b, err := json.Marshal(r.Structured); err == nil {
			out.Structured = b
		} else {
			unusable = "cannot be encoded as JSON: " + err.Error()
		}
	}
	switch {
	case unusable != "" && hasText:
		// The model reads the text; it is told what it is not shown.
		out.Content = append(out.Content, model.TextPart(fmt.Sprintf("[the tool's structured output %s; not shown]", unusable)))
	case unusable != "":
		// Nothing else says what the tool returned: not an empty success.
		out.IsError = true
		out.Content = append([]model.Part{model.TextPart(fmt.Sprintf("tool %s returned structured output that %s; it cannot be read", r.Tool, unusable))}, out.Content...)
	case mcpStructured && !hasText && out.Structured != nil:
		out.Content = append(out.Content, model.TextPart(string(out.Structured)))
	}
	return out
}
