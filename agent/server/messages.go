package server

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
)

// EncodeMessages gives messages in the LangChain form the LangGraph clients
// read: {id, type: human|ai|system|tool, content, tool_calls, tool_call_id,
// name}. A tool message with several results becomes one message per
// result. Use it in a [Codec] for a state holding model.Messages.
func EncodeMessages(ms model.Messages) []map[string]any {
	out := make([]map[string]any, 0, len(ms))
	for _, m := range ms {
		switch m.Role {
		case model.RoleTool:
			for i, p := range m.Parts {
				if p.ToolResult == nil {
					continue
				}
				id := m.ID
				if i > 0 {
					id = fmt.Sprintf("%s-%d", m.ID, i)
				}
				out = append(out, map[string]any{"id": id, "type": "tool", "content": p.ToolResult.Text(), "tool_call_id": p.ToolResult.CallID,
					"name": p.ToolResult.Name, "status": map[bool]string{true: "error", false: "success"}[p.ToolResult.IsError]})
			}
		default:
			typ := map[model.Role]string{model.RoleUser: "human", model.RoleAssistant: "ai", model.RoleSystem: "system"}[m.Role]
			if typ == "" {
				typ = string(m.Role)
			}
			e := map[string]any{"id": m.ID, "type": typ, "content": m.Text()}
			if m.Name != "" {
				e["name"] = m.Name
			}
			if m.Role == model.RoleAssistant {
				calls := []map[string]any{}
				for _, c := range m.ToolCalls() {
					var args any = map[string]any{}
					if len(c.Arguments) > 0 {
						_ = json.Unmarshal(c.Arguments, &args)
					}
					calls = append(calls, map[string]any{"id": c.ID, "name": c.Name, "args": args, "type": "tool_call"})
				}
				e["tool_calls"] = calls
			}
			out = append(out, e)
		}
	}
	return out
}

// DecodeMessages reads messages in the forms LangGraph clients send:
// {role: user|assistant|system, content} or {type: human|ai|system,
// content}, content a string or a list of {type: "text", text} blocks.
// Messages without an id get one.
func DecodeMessages(data json.RawMessage) (model.Messages, error) {
	var in []struct {
		ID      string          `json:"id"`
		Role    string          `json:"role"`
		Type    string          `json:"type"`
		Name    string          `json:"name"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("messages: must be an array of {role or type, content}: %w", err)
	}
	out := make(model.Messages, 0, len(in))
	for i, m := range in {
		kind := m.Role
		if kind == "" {
			kind = m.Type
		}
		var text string
		if err := json.Unmarshal(m.Content, &text); err != nil {
			var blocks []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &blocks); err != nil {
				return nil, fmt.Errorf("messages[%d].content: must be a string or a list of text blocks", i)
			}
			var b strings.Builder
			for _, bl := range blocks {
				b.WriteString(bl.Text)
			}
			text = b.String()
		}
		var msg model.Message
		switch kind {
		case "user", "human":
			msg = model.User(text)
		case "assistant", "ai":
			msg = model.Assistant(text)
		case "system":
			msg = model.System(text)
		default:
			return nil, fmt.Errorf("messages[%d]: role %q is not user, assistant or system (or type human, ai, system)", i, kind)
		}
		msg.ID, msg.Name = m.ID, m.Name
		if msg.ID == "" {
			msg.ID = model.NewID()
		}
		out = append(out, msg)
	}
	return out, nil
}
