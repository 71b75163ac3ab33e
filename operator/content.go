package operator

import (
	"context"
	"strings"
)

// MIME types with a meaning of their own.
const (
	// MIMEWidget marks a widget item; its Value is a [Widget].
	MIMEWidget = "application/vnd.mcp.widget+json"
	// MIMEJSON marks a JSON item; its Value is any JSON value.
	MIMEJSON = "application/json"
)

// Content is one item of a multi-modal result: text, an image, a widget, a
// JSON value.
type Content struct {
	// MIMEType is the item's type ("text/plain", "text/markdown",
	// "image/png", MIMEWidget, MIMEJSON). Empty means "text/plain".
	MIMEType string `json:"mime_type,omitempty"`
	// Text is the text of a text item.
	Text string `json:"text,omitempty"`
	// Data is the base64 data of a binary item (image, audio).
	Data string `json:"data,omitempty"`
	// Value is the value of a widget or JSON item.
	Value any `json:"value,omitempty"`
	// AltText describes an image or audio item for those who cannot see
	// or hear it, or is empty.
	AltText string `json:"alt_text,omitempty"`
	// Metadata holds optional details such as a title.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// TextContent returns a text/plain item.
func TextContent(text string) Content { return Content{MIMEType: "text/plain", Text: text} }

// IsText reports whether c is a text item.
func (c Content) IsText() bool { return c.MIMEType == "" || strings.HasPrefix(c.MIMEType, "text/") }

// IsImage reports whether c is an image.
func (c Content) IsImage() bool { return strings.HasPrefix(c.MIMEType, "image/") }

// IsWidget reports whether c is a widget.
func (c Content) IsWidget() bool { return c.MIMEType == MIMEWidget }

// Widget is an interactive component for the client to render.
type Widget struct {
	// Type is the widget kind: "data_table", "chart", "form", "code_editor",
	// "map", or one the client knows.
	Type    string           `json:"widget_type"`
	Title   string           `json:"title,omitempty"`
	Data    map[string]any   `json:"data,omitempty"`
	Actions []map[string]any `json:"actions,omitempty"`
}

// ToolResult is the result of one tool call for programs and user
// interfaces, whatever served it: a local tool, an operator or an MCP
// server (mcptool.FromResult converts the MCP client's result). Its items
// can be what a model does not read (widgets, JSON values) and carry
// metadata. The part of a model message that holds a tool's answer is
// model.ToolResult; [ToolResult.ModelResult] is the one conversion to it.
type ToolResult struct {
	// Tool is the name the tool was called by.
	Tool string `json:"tool"`
	// Contents lists the result's items in order.
	Contents []Content `json:"contents"`
	// Structured is the tool's structured output, if any.
	Structured any `json:"structured,omitempty"`
	// IsError is true when the tool reported a failure in its result
	// (rather than failing to run); Error says what.
	IsError bool   `json:"is_error,omitempty"`
	Error   string `json:"error,omitempty"`
	// Direct is true when the tool (an operator, or a local tool through
	// its Messenger) already answered the user with a direct response
	// ([Result.Direct]): the caller should not write another answer.
	Direct bool `json:"direct,omitempty"`
	// Metadata holds optional details.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Text joins the text items with newlines.
func (r *ToolResult) Text() string {
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
func (r *ToolResult) Value() any {
	if r == nil {
		return nil
	}
	if r.Structured != nil {
		return r.Structured
	}
	return r.Text()
}

// ToolCaller calls tools by name. A request's MCP session is one, through
// mcptool.Session; so is the unified tool provider ([Provider]).
type ToolCaller interface {
	CallTool(ctx context.Context, name string, args map[string]any) (*ToolResult, error)
}

// ToolCallerFunc adapts a function to the [ToolCaller] interface.
type ToolCallerFunc func(ctx context.Context, name string, args map[string]any) (*ToolResult, error)

// CallTool calls f.
func (f ToolCallerFunc) CallTool(ctx context.Context, name string, args map[string]any) (*ToolResult, error) {
	return f(ctx, name, args)
}
