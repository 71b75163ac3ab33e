package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// MIME types a [ToolContent] commonly carries. Any MIME type may appear; these
// are the ones the helpers and the event layer know by name.
const (
	TypeText     = "text/plain"
	TypeMarkdown = "text/markdown"
	TypeHTML     = "text/html"
	TypeJSON     = "application/json"
	TypePNG      = "image/png"
	TypeJPEG     = "image/jpeg"
	TypeSVG      = "image/svg+xml"
	// TypeWidget marks an interactive widget: a JSON [WidgetSpec] that a user
	// interface renders (data table, chart, form, code editor, map).
	TypeWidget = "application/vnd.mcp.widget+json"
	TypeBinary = "application/octet-stream"
)

// ContentKind says which MCP content block a [ToolContent] came from.
type ContentKind string

// The content kinds. ContentStructured is the result's structuredContent;
// ContentWidget is any item whose MIME type is [TypeWidget].
const (
	ContentText         ContentKind = "text"
	ContentImage        ContentKind = "image"
	ContentAudio        ContentKind = "audio"
	ContentResource     ContentKind = "resource"
	ContentResourceLink ContentKind = "resource_link"
	ContentStructured   ContentKind = "structured"
	ContentWidget       ContentKind = "widget"
)

// ToolContent is one item of a tool result: text, an image, audio, an
// embedded resource, a link to a resource, structured JSON or a widget.
//
// Text items carry Text; binary items (images, audio, blob resources) carry
// base64 Data with Encoding "base64"; structured and widget items carry the
// decoded JSON in Value (and its encoding in Text).
type ToolContent struct {
	Kind ContentKind `json:"kind"`
	// MIMEType is the item's MIME type; text items without one are "text/plain".
	MIMEType string `json:"content_type"`
	Text     string `json:"text,omitempty"`
	// Data is base64 for binary items.
	Data string `json:"data,omitempty"`
	// Encoding is "base64" when Data is set.
	Encoding string `json:"encoding,omitempty"`
	// URI and Name identify resources and resource links.
	URI  string `json:"uri,omitempty"`
	Name string `json:"name,omitempty"`
	// Value is the decoded JSON of structured and widget items.
	Value any `json:"value,omitempty"`
	// AltText describes an image or audio item for those who cannot see or
	// hear it: the "alt_text" string of the server's _meta.
	AltText string `json:"alt_text,omitempty"`
	// Metadata holds annotations (audience, priority), titles and the
	// server's _meta.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// IsText reports whether the item is text (any text/* MIME type).
func (c ToolContent) IsText() bool {
	return strings.HasPrefix(c.MIMEType, "text/")
}

// IsImage reports whether the item is an image.
func (c ToolContent) IsImage() bool { return strings.HasPrefix(c.MIMEType, "image/") }

// IsAudio reports whether the item is audio.
func (c ToolContent) IsAudio() bool { return strings.HasPrefix(c.MIMEType, "audio/") }

// IsWidget reports whether the item is an interactive widget.
func (c ToolContent) IsWidget() bool { return c.MIMEType == TypeWidget }

// Bytes returns the item's payload: the decoded base64 Data for binary items,
// else the Text.
func (c ToolContent) Bytes() ([]byte, error) {
	if c.Encoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil {
			return nil, fmt.Errorf("mcp: content %s: bad base64 data: %w", c.MIMEType, err)
		}
		return b, nil
	}
	return []byte(c.Text), nil
}

// TextContent returns a plain-text item.
func TextContent(text string) ToolContent {
	return ToolContent{Kind: ContentText, MIMEType: TypeText, Text: text}
}

// ImageContent returns an image item from base64 data, its MIME type and an
// alternative text (empty for none).
func ImageContent(base64Data, mimeType, altText string) ToolContent {
	return ToolContent{Kind: ContentImage, MIMEType: mimeType, Data: base64Data, Encoding: "base64", AltText: altText}
}

// WidgetSpec describes an interactive widget returned by a tool.
type WidgetSpec struct {
	// WidgetType is "data_table", "chart", "form", "code_editor", "map" or
	// another type the user interface knows.
	WidgetType string         `json:"widget_type"`
	Title      string         `json:"title,omitempty"`
	Data       map[string]any `json:"data,omitempty"`
	Actions    []any          `json:"actions,omitempty"`
}

// WidgetContent returns a widget item for spec.
func WidgetContent(spec WidgetSpec) ToolContent {
	b, _ := json.Marshal(spec) // WidgetSpec always encodes.
	var v any
	_ = json.Unmarshal(b, &v)
	return ToolContent{Kind: ContentWidget, MIMEType: TypeWidget, Text: string(b), Value: v}
}

// Widget decodes a widget item's JSON into a [WidgetSpec].
func (c ToolContent) Widget() (WidgetSpec, error) {
	var spec WidgetSpec
	if !c.IsWidget() {
		return spec, fmt.Errorf("mcp: content is %s, not a widget (%s)", c.MIMEType, TypeWidget)
	}
	if err := json.Unmarshal([]byte(c.Text), &spec); err != nil {
		return spec, fmt.Errorf("mcp: widget content is not a widget spec: %w", err)
	}
	return spec, nil
}

// Status is the outcome of a tool call.
type Status string

// The call outcomes. StatusError is a tool that reported failure (MCP
// isError) or a call that failed; StatusTimeout and StatusCancelled are calls
// whose context ended.
const (
	StatusSuccess   Status = "success"
	StatusError     Status = "error"
	StatusTimeout   Status = "timeout"
	StatusCancelled Status = "cancelled"
)

// ToolResult is the normalised result of one MCP tools/call: the items in
// the MCP content kinds, the call's status and duration, and the server
// that served it. Programs that treat every tool alike use
// operator.ToolResult (mcptool.FromResult converts); a model reads a call's
// result as a model.ToolResult (mcptool.Result converts).
type ToolResult struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Status Status `json:"status"`
	// Contents lists the result's items in the order the server sent them;
	// a structuredContent object comes last as a ContentStructured item.
	Contents []ToolContent `json:"contents"`
	// Structured is the result's structuredContent, decoded, or nil.
	Structured any `json:"structured,omitempty"`
	// Error describes the failure when Status is not StatusSuccess.
	Error    string         `json:"error,omitempty"`
	Duration time.Duration  `json:"duration"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// TextContents returns the text items.
func (r *ToolResult) TextContents() []ToolContent { return r.filter(ToolContent.IsText) }

// ImageContents returns the image items.
func (r *ToolResult) ImageContents() []ToolContent { return r.filter(ToolContent.IsImage) }

// CombinedText joins the text items with newlines.
func (r *ToolResult) CombinedText() string {
	var b strings.Builder
	for i, c := range r.TextContents() {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// HasImages reports whether any item is an image.
func (r *ToolResult) HasImages() bool { return r.any(ToolContent.IsImage) }

// HasWidgets reports whether any item is a widget.
func (r *ToolResult) HasWidgets() bool { return r.any(ToolContent.IsWidget) }

func (r *ToolResult) filter(keep func(ToolContent) bool) []ToolContent {
	var out []ToolContent
	for _, c := range r.Contents {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

func (r *ToolResult) any(match func(ToolContent) bool) bool {
	for _, c := range r.Contents {
		if match(c) {
			return true
		}
	}
	return false
}

// normalise converts an mcp-go result into the package's content items.
func normalise(res *mcpgo.CallToolResult) []ToolContent {
	out := make([]ToolContent, 0, len(res.Content)+1)
	for _, c := range res.Content {
		if tc, ok := convertContent(c); ok {
			out = append(out, tc)
		}
	}
	if res.StructuredContent != nil {
		raw := res.RawStructuredContent
		if len(raw) == 0 {
			raw, _ = json.Marshal(res.StructuredContent)
		}
		out = append(out, ToolContent{Kind: ContentStructured, MIMEType: TypeJSON, Text: string(raw), Value: res.StructuredContent})
	}
	return out
}

func convertContent(c mcpgo.Content) (ToolContent, bool) {
	switch v := c.(type) {
	case mcpgo.TextContent:
		return textItem(v.Text, v.Annotated, v.Meta), true
	case *mcpgo.TextContent:
		return textItem(v.Text, v.Annotated, v.Meta), true
	case mcpgo.ImageContent:
		return binaryItem(ContentImage, v.Data, v.MIMEType, v.Annotated, v.Meta), true
	case *mcpgo.ImageContent:
		return binaryItem(ContentImage, v.Data, v.MIMEType, v.Annotated, v.Meta), true
	case mcpgo.AudioContent:
		return binaryItem(ContentAudio, v.Data, v.MIMEType, v.Annotated, v.Meta), true
	case *mcpgo.AudioContent:
		return binaryItem(ContentAudio, v.Data, v.MIMEType, v.Annotated, v.Meta), true
	case mcpgo.ResourceLink:
		return linkItem(v), true
	case *mcpgo.ResourceLink:
		return linkItem(*v), true
	case mcpgo.EmbeddedResource:
		return resourceItem(v), true
	case *mcpgo.EmbeddedResource:
		return resourceItem(*v), true
	}
	return ToolContent{}, false
}

func metadata(a mcpgo.Annotated, meta *mcpgo.Meta) map[string]any {
	var m map[string]any
	set := func(k string, v any) {
		if m == nil {
			m = map[string]any{}
		}
		m[k] = v
	}
	if a.Annotations != nil {
		if len(a.Annotations.Audience) > 0 {
			set("audience", a.Annotations.Audience)
		}
		if a.Annotations.Priority != nil {
			set("priority", *a.Annotations.Priority)
		}
	}
	if meta != nil && len(meta.AdditionalFields) > 0 {
		set("_meta", meta.AdditionalFields)
	}
	return m
}

func textItem(text string, a mcpgo.Annotated, meta *mcpgo.Meta) ToolContent {
	return ToolContent{Kind: ContentText, MIMEType: TypeText, Text: text, Metadata: metadata(a, meta)}
}

func binaryItem(kind ContentKind, data, mime string, a mcpgo.Annotated, meta *mcpgo.Meta) ToolContent {
	if mime == "" {
		mime = TypeBinary
	}
	c := ToolContent{Kind: kind, MIMEType: mime, Data: data, Encoding: "base64", Metadata: metadata(a, meta)}
	if meta != nil {
		c.AltText, _ = meta.AdditionalFields["alt_text"].(string)
	}
	return c
}

func linkItem(l mcpgo.ResourceLink) ToolContent {
	c := ToolContent{Kind: ContentResourceLink, MIMEType: l.MIMEType, URI: l.URI, Name: l.Name, Text: l.Description, Metadata: metadata(l.Annotated, l.Meta)}
	if l.Title != "" {
		if c.Metadata == nil {
			c.Metadata = map[string]any{}
		}
		c.Metadata["title"] = l.Title
	}
	return c
}

func resourceItem(r mcpgo.EmbeddedResource) ToolContent {
	c := ToolContent{Kind: ContentResource, Metadata: metadata(r.Annotated, r.Meta)}
	switch rc := r.Resource.(type) {
	case mcpgo.TextResourceContents:
		c.URI, c.MIMEType, c.Text = rc.URI, rc.MIMEType, rc.Text
	case *mcpgo.TextResourceContents:
		c.URI, c.MIMEType, c.Text = rc.URI, rc.MIMEType, rc.Text
	case mcpgo.BlobResourceContents:
		c.URI, c.MIMEType, c.Data, c.Encoding = rc.URI, rc.MIMEType, rc.Blob, "base64"
	case *mcpgo.BlobResourceContents:
		c.URI, c.MIMEType, c.Data, c.Encoding = rc.URI, rc.MIMEType, rc.Blob, "base64"
	}
	if c.MIMEType == "" {
		if c.Encoding == "base64" {
			c.MIMEType = TypeBinary
		} else {
			c.MIMEType = TypeText
		}
	}
	if c.MIMEType == TypeWidget {
		c.Kind = ContentWidget
		var v any
		if c.Encoding == "base64" {
			if b, err := base64.StdEncoding.DecodeString(c.Data); err == nil {
				c.Text, c.Data, c.Encoding = string(b), "", ""
			}
		}
		if json.Unmarshal([]byte(c.Text), &v) == nil {
			c.Value = v
		}
	}
	return c
}
