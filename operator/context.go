package operator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/memory"
)

// Context is what an operator works on. The fields are set by the caller
// (the supervisor's tool node, a workflow step) and read by the operator.
type Context struct {
	// Query is the text the operator works on: the user's query or the
	// query a workflow step mapped to it.
	Query string
	// Params holds the operator's named inputs (a workflow step's input
	// mapping, a tool call's arguments). Nil means none.
	Params map[string]any
	// Assembled is the context assembled for the operator's requirements,
	// or nil when none was assembled.
	Assembled *memory.Assembled
	// Tools calls MCP tools: the request's MCP session. Required for
	// MCPBacked and Hybrid operators.
	Tools ToolCaller
	// Turn is the current conversation turn (results and actions so far),
	// or nil.
	Turn *memory.Turn
	// Messenger sends the operator's messages to the user. Nil discards
	// messages and refuses questions.
	Messenger *Messenger
}

// Param returns the named parameter as a string: a string as is, anything
// else rendered as JSON, "" when absent.
func (c *Context) Param(name string) string {
	if c == nil || c.Params == nil {
		return ""
	}
	return Text(c.Params[name])
}

// Emitter receives events; *event.Emitter implements it.
type Emitter interface {
	Emit(ctx context.Context, p event.Payload) error
}

// Elicitor asks the user a question and waits for the answer. The request's
// ElicitationID is set; the answer carries the same id.
type Elicitor interface {
	Elicit(ctx context.Context, req event.ElicitationRequest) (event.ElicitationResponse, error)
}

// Messenger turns one operator's messages into events. It checks each
// message against the operator's [Capabilities]. A nil *Messenger discards
// progress and content and refuses questions with [ErrNoElicitor].
type Messenger struct {
	name     string
	caps     Capabilities
	emitter  Emitter
	elicitor Elicitor
	direct   atomic.Bool // a direct response was sent
}

// SentDirect reports whether the messenger sent a direct response
// ([Messenger.Content] with direct, or [Messenger.Stream]): the user
// already has the operator's answer. [Registry.Execute] sets
// [Result.Direct] from it.
func (m *Messenger) SentDirect() bool { return m != nil && m.direct.Load() }

// NewMessenger returns the messenger of the operator described by m,
// emitting through e (nil discards) and asking through el (nil refuses
// questions).
func NewMessenger(m Metadata, e Emitter, el Elicitor) *Messenger {
	return &Messenger{name: m.Name, caps: m.Capabilities, emitter: e, elicitor: el}
}

func (m *Messenger) emit(ctx context.Context, p event.Payload) error {
	if m == nil || m.emitter == nil {
		return nil
	}
	return m.emitter.Emit(ctx, p)
}

func (m *Messenger) allow(ok bool, what string) error {
	if m != nil && !ok {
		return &CapabilityError{Operator: m.name, Capability: what}
	}
	return nil
}

// Progress reports progress as a tool.progress event: fraction is the
// completed part, from 0 to 1. It needs Capabilities.Progress.
func (m *Messenger) Progress(ctx context.Context, fraction float64, message string) error {
	if err := m.allow(m != nil && m.caps.Progress, "progress"); err != nil {
		return err
	}
	if m == nil {
		return nil
	}
	return m.emit(ctx, event.ToolProgress{Tool: m.name, Progress: min(max(fraction, 0), 1), Message: message})
}

// Content sends one content item to the user as a tool.content event. With
// direct set, a text item is sent as a direct.response event instead: the
// operator's answer, which bypasses the writer; that needs
// Capabilities.DirectResponse.
func (m *Messenger) Content(ctx context.Context, c Content, direct bool) error {
	if m == nil {
		return nil
	}
	mime := c.MIMEType
	if mime == "" {
		mime = "text/plain"
	}
	if direct {
		if err := m.allow(m.caps.DirectResponse, "direct response"); err != nil {
			return err
		}
		if !c.IsText() {
			return fmt.Errorf("operator: a direct response must be text; %q sends %s content, send it without direct", m.name, mime)
		}
		if err := m.emit(ctx, event.DirectResponse{Operator: m.name, ContentType: mime, Content: c.Text}); err != nil {
			return err
		}
		m.direct.Store(true)
		return nil
	}
	tc := event.ToolContent{Tool: m.name, ContentType: mime, Metadata: c.Metadata}
	switch {
	case c.IsText():
		tc.Data = c.Text
	case c.Value != nil:
		tc.Data = c.Value
	default:
		tc.Data, tc.Encoding = c.Data, "base64"
	}
	return m.emit(ctx, tc)
}

// Stream starts a direct response sent in chunks: a
// direct.response.start event now, a direct.response.chunk per Write, and
// direct.response.done on Close. It needs Capabilities.Streaming and
// Capabilities.DirectResponse. contentType empty means "text/markdown".
func (m *Messenger) Stream(ctx context.Context, contentType string) (*DirectStream, error) {
	if err := m.allow(m != nil && m.caps.Streaming, "streaming"); err != nil {
		return nil, err
	}
	if err := m.allow(m != nil && m.caps.DirectResponse, "direct response"); err != nil {
		return nil, err
	}
	if contentType == "" {
		contentType = "text/markdown"
	}
	if err := m.emit(ctx, event.DirectResponseStart{Operator: m.name, ContentType: contentType}); err != nil {
		return nil, err
	}
	m.direct.Store(true)
	return &DirectStream{m: m}, nil
}

// DirectStream is a direct response being streamed; see [Messenger.Stream].
// It is not safe for concurrent use.
type DirectStream struct {
	m      *Messenger
	closed bool
}

// Write sends one chunk.
func (d *DirectStream) Write(ctx context.Context, chunk string) error {
	if d.closed {
		return fmt.Errorf("operator: Write on a closed direct response stream of %q", d.m.name)
	}
	return d.m.emit(ctx, event.DirectResponseChunk{Content: chunk})
}

// Close ends the response. Closing twice does nothing.
func (d *DirectStream) Close(ctx context.Context) error {
	if d.closed {
		return nil
	}
	d.closed = true
	return d.m.emit(ctx, event.DirectResponseDone{})
}

// Widget sends a widget as a tool.content event of type MIMEWidget. It
// needs OutputWidget among Capabilities.OutputTypes.
func (m *Messenger) Widget(ctx context.Context, w Widget) error {
	if err := m.allow(m != nil && m.caps.Outputs(OutputWidget), "widget output"); err != nil {
		return err
	}
	return m.Content(ctx, Content{MIMEType: MIMEWidget, Value: w}, false)
}

// Confirm asks the user a yes/no question and reports the answer: true only
// when the user accepted and answered yes. It needs
// Capabilities.Elicitation.
func (m *Messenger) Confirm(ctx context.Context, question string) (bool, error) {
	resp, err := m.ask(ctx, question, []string{"yes", "no"})
	if err != nil {
		return false, err
	}
	if resp.Action != event.ActionAccept {
		return false, nil
	}
	switch v := resp.Content["answer"].(type) {
	case bool:
		return v, nil
	case string:
		return v == "yes", nil
	}
	return false, fmt.Errorf("operator: the answer to %q has no yes/no \"answer\" field: %v", question, resp.Content)
}

// Choose asks the user to pick one of options and returns the choice. A
// declined or cancelled question is [ErrDeclined]. It needs
// Capabilities.Elicitation.
func (m *Messenger) Choose(ctx context.Context, question string, options []string) (string, error) {
	if len(options) == 0 {
		return "", fmt.Errorf("operator: Choose %q without options; pass at least one", question)
	}
	resp, err := m.ask(ctx, question, options)
	if err != nil {
		return "", err
	}
	if resp.Action != event.ActionAccept {
		return "", fmt.Errorf("%w: %q (%s)", ErrDeclined, question, resp.Action)
	}
	choice, _ := resp.Content["answer"].(string)
	if !slices.Contains(options, choice) {
		return "", fmt.Errorf("operator: the answer %q to %q is not one of %q", choice, question, options)
	}
	return choice, nil
}

func (m *Messenger) ask(ctx context.Context, question string, options []string) (event.ElicitationResponse, error) {
	if m == nil || m.elicitor == nil {
		return event.ElicitationResponse{}, ErrNoElicitor
	}
	if err := m.allow(m.caps.Elicitation, "elicitation"); err != nil {
		return event.ElicitationResponse{}, err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return m.elicitor.Elicit(ctx, event.ElicitationRequest{
		ElicitationID: "elicit-" + hex.EncodeToString(b[:]),
		Tool:          m.name,
		Message:       question,
		Options:       options,
	})
}

// Elicitations is the table of a request's pending questions: Elicit emits
// an elicitation.request event and waits; Respond, called when the user's
// answer arrives (an HTTP handler), wakes it. It implements [Elicitor] and
// is safe for concurrent use.
type Elicitations struct {
	emitter Emitter
	mu      sync.Mutex
	pending map[string]chan event.ElicitationResponse
}

// NewElicitations returns an empty table whose questions are emitted
// through e.
func NewElicitations(e Emitter) *Elicitations {
	return &Elicitations{emitter: e, pending: map[string]chan event.ElicitationResponse{}}
}

// Elicit emits req and waits for its answer or for ctx to end.
func (t *Elicitations) Elicit(ctx context.Context, req event.ElicitationRequest) (event.ElicitationResponse, error) {
	ch := make(chan event.ElicitationResponse, 1)
	t.mu.Lock()
	t.pending[req.ElicitationID] = ch
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.pending, req.ElicitationID)
		t.mu.Unlock()
	}()
	if t.emitter != nil {
		if err := t.emitter.Emit(ctx, req); err != nil {
			return event.ElicitationResponse{}, err
		}
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		return event.ElicitationResponse{}, ctx.Err()
	}
}

// Respond delivers the answer to a pending question. An id with no pending
// question is an error wrapping [ErrNoQuestion].
func (t *Elicitations) Respond(resp event.ElicitationResponse) error {
	t.mu.Lock()
	ch, ok := t.pending[resp.ElicitationID]
	if ok {
		delete(t.pending, resp.ElicitationID)
	}
	t.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrNoQuestion, resp.ElicitationID)
	}
	ch <- resp
	return nil
}

// Pending returns the ids of the questions waiting for an answer, sorted.
func (t *Elicitations) Pending() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]string, 0, len(t.pending))
	for id := range t.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
