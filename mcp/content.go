package mcp

import (
	"encoding/base64"
	"encoding/json"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// normalise converts an mcp-go result into the package's content items.
func normalise(res *mcpgo.CallToolResult) []toolresult.Content {
	out := make([]toolresult.Content, 0, len(res.Content)+1)
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
		out = append(out, toolresult.Content{Kind: toolresult.KindStructured, MIMEType: toolresult.MIMEJSON, Text: string(raw), Value: res.StructuredContent})
	}
	return out
}

func convertContent(c mcpgo.Content) (toolresult.Content, bool) {
	switch v := c.(type) {
	case mcpgo.TextContent:
		return textItem(v.Text, v.Annotated, v.Meta), true
	case *mcpgo.TextContent:
		return textItem(v.Text, v.Annotated, v.Meta), true
	case mcpgo.ImageContent:
		return binaryItem(toolresult.KindImage, v.Data, v.MIMEType, v.Annotated, v.Meta), true
	case *mcpgo.ImageContent:
		return binaryItem(toolresult.KindImage, v.Data, v.MIMEType, v.Annotated, v.Meta), true
	case mcpgo.AudioContent:
		return binaryItem(toolresult.KindAudio, v.Data, v.MIMEType, v.Annotated, v.Meta), true
	case *mcpgo.AudioContent:
		return binaryItem(toolresult.KindAudio, v.Data, v.MIMEType, v.Annotated, v.Meta), true
	case mcpgo.ResourceLink:
		return linkItem(v), true
	case *mcpgo.ResourceLink:
		return linkItem(*v), true
	case mcpgo.EmbeddedResource:
		return resourceItem(v), true
	case *mcpgo.EmbeddedResource:
		return resourceItem(*v), true
	}
	return toolresult.Content{}, false
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

func textItem(text string, a mcpgo.Annotated, meta *mcpgo.Meta) toolresult.Content {
	return toolresult.Content{Kind: toolresult.KindText, MIMEType: toolresult.MIMEText, Text: text, Metadata: metadata(a, meta)}
}

func binaryItem(kind toolresult.Kind, data, mime string, a mcpgo.Annotated, meta *mcpgo.Meta) toolresult.Content {
	if mime == "" {
		mime = toolresult.MIMEBinary
	}
	c := toolresult.Content{Kind: kind, MIMEType: mime, Data: data, Metadata: metadata(a, meta)}
	if meta != nil {
		c.AltText, _ = meta.AdditionalFields["alt_text"].(string)
	}
	return c
}

func linkItem(l mcpgo.ResourceLink) toolresult.Content {
	c := toolresult.Content{Kind: toolresult.KindResourceLink, MIMEType: l.MIMEType, URI: l.URI, Name: l.Name, Text: l.Description, Metadata: metadata(l.Annotated, l.Meta)}
	if l.Title != "" {
		if c.Metadata == nil {
			c.Metadata = map[string]any{}
		}
		c.Metadata["title"] = l.Title
	}
	return c
}

func resourceItem(r mcpgo.EmbeddedResource) toolresult.Content {
	c := toolresult.Content{Kind: toolresult.KindResource, Metadata: metadata(r.Annotated, r.Meta)}
	blob := false
	switch rc := r.Resource.(type) {
	case mcpgo.TextResourceContents:
		c.URI, c.MIMEType, c.Text = rc.URI, rc.MIMEType, rc.Text
	case *mcpgo.TextResourceContents:
		c.URI, c.MIMEType, c.Text = rc.URI, rc.MIMEType, rc.Text
	case mcpgo.BlobResourceContents:
		c.URI, c.MIMEType, c.Data, blob = rc.URI, rc.MIMEType, rc.Blob, true
	case *mcpgo.BlobResourceContents:
		c.URI, c.MIMEType, c.Data, blob = rc.URI, rc.MIMEType, rc.Blob, true
	}
	if c.MIMEType == "" {
		if blob {
			c.MIMEType = toolresult.MIMEBinary
		} else {
			c.MIMEType = toolresult.MIMEText
		}
	}
	if c.MIMEType == toolresult.MIMEWidget {
		c.Kind = toolresult.KindWidget
		var v any
		if blob {
			if b, err := base64.StdEncoding.DecodeString(c.Data); err == nil {
				c.Text, c.Data = string(b), ""
			}
		}
		if json.Unmarshal([]byte(c.Text), &v) == nil {
			c.Value = v
		}
	}
	return c
}
