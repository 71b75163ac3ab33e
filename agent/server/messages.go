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

// streamedMessages is the state of a run's stream in the messages modes.
// In the legacy messages mode (stream_mode "messages") it sends, as
// LangGraph's servers do, messages/metadata ({id: {metadata}}) when a
// model reply's first chunk arrives, messages/partial ([the reply so
// far]) at each of its chunks, and messages/complete ([new messages]) when
// a step adds messages to the state's "messages" list, with the ids the
// state gives them. In messages-tuple it sends, besides the chunks of
// model replies, each message a step adds to the state without streaming
// a reply (a tool result, a node's own message) as one whole chunk with
// its state id. The messages of the run's input state are not new. It is
// used by one run's event loop only.
type streamedMessages struct {
	legacy, tuple bool // the modes asked for
	// partial holds the replies being streamed, by id: those of the
	// current step, cleared at each values event (a reply ends with its
	// task, in its step) and as each reply ends (model.ChunkDone).
	partial map[string]*legacyReply
	// streamed says that a model reply streamed since the last values
	// event, and nodes holds the nodes that ran since (one per task of
	// the step).
	streamed bool
	nodes    []string
	// seen holds the ids of the messages of the last values event, and
	// count their number: a message without an id is new when its index
	// is at least count.
	seen    map[string]bool
	count   int
	started bool // a values event was read
}

// legacyReply is a model reply accumulated from its chunks.
type legacyReply struct {
	text  strings.Builder
	calls []map[string]any // tool_call_chunks merged by index, in the order first seen
}

func newStreamedMessages(legacy, tuple bool) *streamedMessages {
	return &streamedMessages{legacy: legacy, tuple: tuple, partial: map[string]*legacyReply{}}
}

// ran records that node ran in the current step.
func (l *streamedMessages) ran(node string) { l.nodes = append(l.nodes, node) }

// chunk sends a streamed chunk (messageChunk's form) as a messages-tuple
// event and, in the legacy mode, adds it to its reply and emits
// messages/metadata for a new reply, then messages/partial.
func (l *streamedMessages) chunk(c, meta map[string]any, emit func(string, any) error) error {
	l.streamed = true
	if l.legacy {
		if err := l.partialChunk(c, meta, emit); err != nil {
			return err
		}
	}
	if !l.tuple {
		return nil
	}
	return emit("messages", []any{c, meta})
}

func (l *streamedMessages) partialChunk(c, meta map[string]any, emit func(string, any) error) error {
	id, _ := c["id"].(string)
	r := l.partial[id]
	if r == nil {
		r = &legacyReply{}
		l.partial[id] = r
		if err := emit("messages/metadata", map[string]any{id: map[string]any{"metadata": meta}}); err != nil {
			return err
		}
	}
	text, _ := c["content"].(string)
	r.text.WriteString(text)
	tcs, _ := c["tool_call_chunks"].([]any)
	for _, tc := range tcs {
		d, _ := tc.(map[string]any)
		// Merged by index, looked up rather than used as a position: a
		// model's index may be any number.
		idx, _ := d["index"].(int)
		var call map[string]any
		for _, c := range r.calls {
			if c["index"] == idx {
				call = c
				break
			}
		}
		if call == nil {
			call = map[string]any{"index": idx, "id": nil, "name": nil, "args": ""}
			r.calls = append(r.calls, call)
		}
		for _, k := range []string{"id", "name"} {
			if v := d[k]; v != nil {
				call[k] = v
			}
		}
		args, _ := d["args"].(string)
		call["args"] = call["args"].(string) + args
	}
	return emit("messages/partial", []any{r.message(id)})
}

// message gives the reply so far as a LangChain AI message: tool calls
// whose arguments are not yet whole JSON are invalid_tool_calls.
func (r *legacyReply) message(id string) map[string]any {
	calls, invalid := []any{}, []any{}
	for _, c := range r.calls {
		args := c["args"].(string)
		var v map[string]any
		if json.Unmarshal([]byte(args), &v) == nil && v != nil {
			calls = append(calls, map[string]any{"id": c["id"], "name": c["name"], "args": v, "type": "tool_call"})
			continue
		}
		invalid = append(invalid, map[string]any{"id": c["id"], "name": c["name"], "args": args, "error": nil, "type": "invalid_tool_call"})
	}
	return map[string]any{"id": id, "type": "ai", "content": r.text.String(), "tool_calls": calls, "invalid_tool_calls": invalid,
		"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}}
}

// done forgets the reply id, which ended.
func (l *streamedMessages) done(id string) { delete(l.partial, id) }

// values reads a values event of the run (the state as JSON) and emits
// the messages it adds to "messages": as messages/complete in the legacy
// mode, and, when no reply streamed in the step, each as a whole
// messages-tuple chunk with the metadata meta gives for its node (the
// step's node when it ran one task, else "").
func (l *streamedMessages) values(v json.RawMessage, meta func(node string) map[string]any, emit func(string, any) error) error {
	clear(l.partial)
	streamed, nodes := l.streamed, l.nodes
	l.streamed, l.nodes = false, l.nodes[:0]
	var st struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(v, &st) != nil {
		return nil // a state without a messages list adds none
	}
	seen := make(map[string]bool, len(st.Messages))
	var added []json.RawMessage
	for i, m := range st.Messages {
		var h struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(m, &h)
		if h.ID != "" {
			seen[h.ID] = true
		}
		if l.started && ((h.ID != "" && !l.seen[h.ID]) || (h.ID == "" && i >= l.count)) {
			added = append(added, m)
		}
	}
	l.seen, l.count, l.started = seen, len(st.Messages), true
	if len(added) == 0 {
		return nil
	}
	if l.legacy {
		if err := emit("messages/complete", added); err != nil {
			return err
		}
	}
	if !l.tuple || streamed {
		return nil
	}
	node := ""
	if len(nodes) == 1 {
		node = nodes[0]
	}
	for _, m := range added {
		if err := emit("messages", []any{m, meta(node)}); err != nil {
			return err
		}
	}
	return nil
}
