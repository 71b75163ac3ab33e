package server

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
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

// DecodeMessages reads messages in the forms LangGraph clients send, the
// LangChain message dicts of the official SDKs, as well as model.Message's
// own JSON form (a message with "parts"). A LangChain message is
// {role or type, content, id, name, tool_calls, tool_call_id, status}:
//   - role user or type human, role assistant or type ai, system (or
//     developer), tool (with tool_call_id; status "error" marks a failed
//     call), and type remove with an id (model.Remove; the id
//     "__remove_all__", the SDKs' REMOVE_ALL_MESSAGES, is
//     model.RemoveAll); a type ending in
//     MessageChunk (AIMessageChunk) is read as its short form;
//   - content a string, or a list of content blocks: strings, {type:
//     "text", text}, images ({type: "image_url", image_url: {url} or url},
//     or {type: "image", url, or base64 data with mime_type}), and an
//     assistant's {type: "tool_call" or "tool_use", id, name, args or
//     input}; another block is refused, naming it;
//   - tool_calls, an assistant's [{id, name, args}].
//
// Every message needs content (or an assistant's tool calls); a tool
// call needs its id, unique in the message, and name, and its arguments
// must be a JSON object (or a string of one). One input holds at most
// 10000 messages, one message at most 1000 blocks or tool calls.
//
// data is an array of messages, or one message (an object, or a string:
// a user message). Messages without an id get one ([model.NewID]). Use it
// in a [Codec] whose state holds model.Messages; the default codec reads a
// top-level model.Messages field of the state this way, without giving ids
// (the messages reducer gives them).
func DecodeMessages(data json.RawMessage) (model.Messages, error) {
	ms, err := decodeMessages(data)
	if err != nil {
		return nil, pathError("messages", err)
	}
	for i := range ms {
		if ms[i].ID == "" {
			ms[i].ID = model.NewID()
		}
	}
	return ms, nil
}

// lcMessage is a message in LangChain's form, or in model.Message's (Parts).
type lcMessage struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []lcToolCall    `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Status     string          `json:"status"`
	Parts      json.RawMessage `json:"parts"`
}

type lcToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Args  json.RawMessage `json:"args"`
	Input json.RawMessage `json:"input"` // a tool_use block's (Anthropic's form)
}

// Bounds of one input's messages: a small body must not become many
// stored messages or parts.
const (
	maxInputMessages = 10000 // messages in one input
	maxInputBlocks   = 1000  // content blocks, or tool calls, of one message
)

// removeAllID is the id of LangChain's REMOVE_ALL_MESSAGES removal, which
// is model.RemoveAll here.
const removeAllID = "__remove_all__"

// decodeMessages is DecodeMessages without giving ids, which the messages
// reducer gives: a codec's Input must give the same value for the same
// data.
func decodeMessages(data json.RawMessage) (model.Messages, error) {
	data = json.RawMessage(strings.TrimSpace(string(data)))
	var in []json.RawMessage
	switch {
	case len(data) == 0 || string(data) == "null":
		return nil, nil
	case data[0] == '[':
		if err := json.Unmarshal(data, &in); err != nil {
			return nil, fmt.Errorf("must be an array of messages {role or type, content}: %w", err)
		}
	case data[0] == '{', data[0] == '"':
		in = []json.RawMessage{data}
	default:
		return nil, fmt.Errorf("must be an array of messages {role or type, content}, not %.20s", data)
	}
	if len(in) > maxInputMessages {
		return nil, fmt.Errorf(": %d messages, over the limit of %d in one input; send fewer", len(in), maxInputMessages)
	}
	out := make(model.Messages, 0, len(in))
	for i, raw := range in {
		m, err := decodeMessage(raw)
		if err != nil {
			return nil, fmt.Errorf("[%d]%w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// decodeMessage reads one message; its error's text starts with the
// path of what is wrong within the message (".content[1]: ...", or ":
// ..." for the message itself).
func decodeMessage(raw json.RawMessage) (model.Message, error) {
	if isNull(raw) {
		return model.Message{}, errors.New(": must be a message {role or type, content}, not null")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return model.User(text), nil
	}
	var m lcMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return model.Message{}, fmt.Errorf(": must be a message {role or type, content}: %w", err)
	}
	if !isNull(m.Parts) && len(m.Content) == 0 {
		var msg model.Message // model.Message's own form
		if err := json.Unmarshal(raw, &msg); err != nil {
			return model.Message{}, fmt.Errorf(": %w", err)
		}
		return msg, checkOwnForm(&msg)
	}
	kind := m.Role
	if kind == "" {
		kind = m.Type
	}
	if base, ok := strings.CutSuffix(kind, "MessageChunk"); ok {
		kind = strings.ToLower(base)
	}
	var role model.Role
	switch kind {
	case "user", "human":
		role = model.RoleUser
	case "assistant", "ai":
		role = model.RoleAssistant
	case "system", "developer":
		role = model.RoleSystem
	case "tool":
		role = model.RoleTool
	case "remove":
		if m.ID == "" {
			return model.Message{}, errors.New(".id: required for a message of type remove; give the id of the message to remove")
		}
		if m.ID == removeAllID {
			return model.Remove(model.RemoveAll), nil
		}
		return model.Remove(m.ID), nil
	default:
		return model.Message{}, fmt.Errorf(": role %q is not user, assistant, system or tool (or type human, ai, system, tool or remove)", kind)
	}
	parts, err := contentParts(m.Content, role == model.RoleAssistant)
	if err != nil {
		return model.Message{}, err
	}
	msg := model.Message{ID: m.ID, Role: role, Name: m.Name}
	if role == model.RoleTool {
		if m.ToolCallID == "" {
			return model.Message{}, errors.New(".tool_call_id: required for a tool message; give the id of the call it answers")
		}
		msg.Name = ""
		msg.Parts = []model.Part{{Kind: model.PartToolResult, ToolResult: &model.ToolResult{CallID: m.ToolCallID, Name: m.Name, Content: parts, IsError: m.Status == "error"}}}
		return msg, nil
	}
	if len(m.ToolCalls) > maxInputBlocks {
		return model.Message{}, fmt.Errorf(".tool_calls: %d calls, over the limit of %d in one message", len(m.ToolCalls), maxInputBlocks)
	}
	if len(m.ToolCalls) > 0 && role != model.RoleAssistant {
		return model.Message{}, fmt.Errorf(".tool_calls: only an assistant (ai) message has tool calls, not a %s one", kind)
	}
	seen := map[string]bool{}
	for _, p := range parts {
		if p.Kind == model.PartToolCall {
			seen[p.ToolCall.ID] = true
		}
	}
	listed := map[string]bool{}
	for j, c := range m.ToolCalls {
		if c.Name == "" {
			return model.Message{}, fmt.Errorf(".tool_calls[%d].name: required; give the tool's name", j)
		}
		if c.ID == "" {
			return model.Message{}, fmt.Errorf(".tool_calls[%d].id: required; give the call's id, which its tool message names (tool_call_id)", j)
		}
		if listed[c.ID] {
			return model.Message{}, fmt.Errorf(".tool_calls[%d].id: %q is the id of an earlier call of the message; give each call its own id", j, c.ID)
		}
		listed[c.ID] = true
		args, err := callArgs(c)
		if err != nil {
			return model.Message{}, fmt.Errorf(".tool_calls[%d].args: %w", j, err)
		}
		if seen[c.ID] {
			continue // also a block of content, as LangChain keeps Anthropic's
		}
		parts = append(parts, model.ToolCallPart(model.ToolCall{ID: c.ID, Name: c.Name, Arguments: args}))
	}
	if len(parts) == 0 {
		return model.Message{}, errors.New(".content: required; give the message's text or content blocks (or an assistant's tool_calls)")
	}
	msg.Parts = parts
	return msg, nil
}

// isNull says whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// checkOwnForm checks a message given in model.Message's form as a
// LangChain one is checked: a known role, some parts, and a call id on
// each tool call and result.
func checkOwnForm(m *model.Message) error {
	switch m.Role {
	case model.RoleUser, model.RoleAssistant, model.RoleSystem, model.RoleTool:
	default:
		return fmt.Errorf(".role: %q is not user, assistant, system or tool", m.Role)
	}
	if len(m.Parts) == 0 {
		return errors.New(".parts: required; give at least one part")
	}
	if len(m.Parts) > maxInputBlocks {
		return fmt.Errorf(".parts: %d parts, over the limit of %d in one message", len(m.Parts), maxInputBlocks)
	}
	ids := map[string]bool{}
	for i, p := range m.Parts {
		switch {
		case p.Kind == model.PartToolCall && p.ToolCall != nil:
			if p.ToolCall.ID == "" || p.ToolCall.Name == "" {
				return fmt.Errorf(".parts[%d].tool_call: id and name are required", i)
			}
			if ids[p.ToolCall.ID] {
				return fmt.Errorf(".parts[%d].tool_call.id: %q is the id of an earlier call of the message; give each call its own id", i, p.ToolCall.ID)
			}
			ids[p.ToolCall.ID] = true
		case p.Kind == model.PartToolCall:
			return fmt.Errorf(".parts[%d].tool_call: required for a part of kind %q", i, p.Kind)
		case p.Kind == model.PartToolResult && (p.ToolResult == nil || p.ToolResult.CallID == ""):
			return fmt.Errorf(".parts[%d].tool_result.call_id: required; give the id of the call it answers", i)
		}
	}
	return nil
}

// callArgs gives a tool call's arguments as the JSON object model.ToolCall
// holds: args (or a tool_use block's input), which a chunk may give as a
// string of JSON; an error when they are not an object.
func callArgs(c lcToolCall) (json.RawMessage, error) {
	args := c.Args
	if isNull(args) {
		args = c.Input
	}
	var s string
	if json.Unmarshal(args, &s) == nil {
		args = json.RawMessage(s)
	}
	if isNull(args) {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if t := strings.TrimSpace(string(args)); t[0] != '{' || json.Unmarshal(args, &obj) != nil {
		return nil, fmt.Errorf("must be a JSON object of the tool's arguments (or a string of one), not %.40s", args)
	}
	return args, nil
}

// contentBlock is one block of a LangChain message's content.
type contentBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	ImageURL json.RawMessage `json:"image_url"`
	URL      string          `json:"url"`
	Data     string          `json:"data"`
	Base64   string          `json:"base64"`
	MIMEType string          `json:"mime_type"`
	lcToolCall
}

// contentParts reads a LangChain message's content: a string, or a list of
// blocks.
func contentParts(content json.RawMessage, assistant bool) ([]model.Part, error) {
	if len(content) == 0 || string(content) == "null" {
		return nil, nil
	}
	var text string
	if json.Unmarshal(content, &text) == nil {
		return []model.Part{model.TextPart(text)}, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(content, &blocks); err != nil {
		return nil, errors.New(".content: must be a string or a list of content blocks")
	}
	if len(blocks) > maxInputBlocks {
		return nil, fmt.Errorf(".content: %d blocks, over the limit of %d in one message", len(blocks), maxInputBlocks)
	}
	parts := make([]model.Part, 0, len(blocks))
	ids := map[string]bool{}
	for i, raw := range blocks {
		if isNull(raw) {
			return nil, fmt.Errorf(".content[%d]: must be a string or a block {type, ...}, not null", i)
		}
		if json.Unmarshal(raw, &text) == nil {
			parts = append(parts, model.TextPart(text))
			continue
		}
		var b contentBlock
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf(".content[%d]: must be a string or a block {type, ...}: %v", i, err)
		}
		switch b.Type {
		case "text":
			parts = append(parts, model.TextPart(b.Text))
		case "image_url":
			url := b.URL
			var obj struct {
				URL string `json:"url"`
			}
			if json.Unmarshal(b.ImageURL, &url) != nil && json.Unmarshal(b.ImageURL, &obj) == nil {
				url = obj.URL
			}
			if url == "" {
				return nil, fmt.Errorf(".content[%d].image_url: give the image's url, {\"url\": ...}", i)
			}
			p, err := imageURLPart(url, "")
			if err != nil {
				return nil, fmt.Errorf(".content[%d].image_url: %w", i, err)
			}
			parts = append(parts, p)
		case "image":
			p, err := imagePart(b)
			if err != nil {
				return nil, fmt.Errorf(".content[%d]: %w", i, err)
			}
			parts = append(parts, p)
		case "tool_call", "tool_use":
			if !assistant {
				return nil, fmt.Errorf(".content[%d]: a %s block belongs to an assistant (ai) message", i, b.Type)
			}
			if b.ID == "" || b.Name == "" {
				return nil, fmt.Errorf(".content[%d]: a %s block needs its id and name", i, b.Type)
			}
			if ids[b.ID] {
				return nil, fmt.Errorf(".content[%d].id: %q is the id of an earlier call of the message; give each call its own id", i, b.ID)
			}
			ids[b.ID] = true
			args, err := callArgs(b.lcToolCall)
			if err != nil {
				return nil, fmt.Errorf(".content[%d].%s: %w", i, argsKey(b.lcToolCall), err)
			}
			parts = append(parts, model.ToolCallPart(model.ToolCall{ID: b.ID, Name: b.Name, Arguments: args}))
		default:
			return nil, fmt.Errorf(".content[%d].type: block type %q is not read; give text, image_url, image, tool_call or tool_use blocks", i, b.Type)
		}
	}
	return parts, nil
}

// argsKey names the key of a call's arguments: args, or a tool_use
// block's input.
func argsKey(c lcToolCall) string {
	if isNull(c.Args) && !isNull(c.Input) {
		return "input"
	}
	return "args"
}

// imagePart reads an image block of LangChain's standard form: url, or
// base64 data with mime_type.
func imagePart(b contentBlock) (model.Part, error) {
	if b.URL != "" {
		p, err := imageURLPart(b.URL, b.MIMEType)
		if err != nil {
			return model.Part{}, fmt.Errorf("url: %w", err)
		}
		return p, nil
	}
	data := b.Base64
	if data == "" {
		data = b.Data
	}
	if data == "" {
		return model.Part{}, errors.New("an image block needs url, or base64 (or data) with mime_type")
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return model.Part{}, fmt.Errorf("the image's data is not base64: %v", err)
	}
	mt := b.MIMEType
	if mt == "" {
		var ok bool
		if mt, ok = model.ImageType(raw); !ok {
			return model.Part{}, errors.New("mime_type: required for an image whose data is not a PNG, JPEG, GIF or WebP image")
		}
	}
	return model.BinaryPart(mt, raw), nil
}

// imageURLPart reads an image's url: a data: URL of base64 image bytes
// becomes a binary part holding them (a provider is given the bytes, not
// the URL), an http or https URL a part that refers to the image; any
// other URL is refused, so that a message no provider takes never
// reaches the thread. mimeType, when not empty, is the type the block
// gave.
func imageURLPart(raw, mimeType string) (model.Part, error) {
	if rest, ok := strings.CutPrefix(raw, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return model.Part{}, errors.New("a data: URL must hold base64 data (data:image/png;base64,...)")
		}
		bytes, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return model.Part{}, fmt.Errorf("the data: URL's data is not base64: %v", err)
		}
		mt, ok := model.ImageType(bytes)
		if !ok {
			return model.Part{}, errors.New("the data: URL's data is not a PNG, JPEG, GIF or WebP image")
		}
		return model.BinaryPart(mt, bytes), nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return model.Part{}, errors.New("give an http or https URL of the image, or a data: URL of its base64 bytes")
	}
	return model.Part{Kind: model.PartBinary, MIMEType: mimeType, URL: raw}, nil
}

// pathError prefixes err, an error of decodeMessages, with the path of
// the messages it read (input.messages).
func pathError(path string, err error) error {
	if strings.HasPrefix(err.Error(), "[") {
		return fmt.Errorf("%s%w", path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
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
