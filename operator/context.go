package operator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// Context is what an operator works on. The fields are set by the caller
// (an agent's tool node, a workflow step) and read by the operator.
type Context struct {
	// Query is the text the operator works on: the user's query or the
	// query a workflow step mapped to it.
	Query string
	// Params holds the operator's named inputs (a workflow step's input
	// mapping, a tool call's arguments). Nil means none. Its values may
	// be shared with other inputs and with earlier steps' outputs (a
	// workflow passes a referenced map or list itself, not a copy): an
	// operator must not modify them; copy a value before changing it.
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

// Messenger turns one operator's messages into reports. It checks each
// message against the operator's [Capabilities]. A nil *Messenger discards
// progress and content and refuses questions with [ErrNoElicitor].
type Messenger struct {
	name     string
	caps     Capabilities
	reporter Reporter
	elicitor elicit.Elicitor
	direct   atomic.Bool // a direct response was sent
}

// SentDirect reports whether the messenger sent a direct response
// ([Messenger.Content] with direct, or [Messenger.Stream]) to a reporter:
// the user already has the operator's answer. Without a reporter the
// response went nowhere, and SentDirect is false. [Registry.Execute] sets
// [Result.Direct] from it.
func (m *Messenger) SentDirect() bool { return m != nil && m.direct.Load() }

// NewMessenger returns the messenger of the operator described by m,
// reporting to r (nil discards) and asking through el (nil refuses
// questions).
func NewMessenger(m Metadata, r Reporter, el elicit.Elicitor) *Messenger {
	return &Messenger{name: m.Name, caps: m.Capabilities, reporter: r, elicitor: el}
}

func (m *Messenger) report(ctx context.Context, r Report) error {
	if m == nil || m.reporter == nil {
		return nil
	}
	return m.reporter.Report(ctx, r)
}

func (m *Messenger) allow(ok bool, what string) error {
	if m != nil && !ok {
		return &CapabilityError{Operator: m.name, Capability: what}
	}
	return nil
}

// Progress reports progress as a [ToolProgress]: fraction is the
// completed part, from 0 to 1. It needs Capabilities.Progress.
func (m *Messenger) Progress(ctx context.Context, fraction float64, message string) error {
	if err := m.allow(m != nil && m.caps.Progress, "progress"); err != nil {
		return err
	}
	if m == nil {
		return nil
	}
	return m.report(ctx, ToolProgress{Tool: m.name, Progress: min(max(fraction, 0), 1), Message: message})
}

// Content sends one content item to the user, reported as a [ToolOutput].
// With direct set, a text item is reported as a [DirectResponse] instead:
// the operator's answer, given to the user as it is; that needs
// Capabilities.DirectResponse.
func (m *Messenger) Content(ctx context.Context, c toolresult.Content, direct bool) error {
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
		if err := m.report(ctx, DirectResponse{Operator: m.name, ContentType: mime, Text: c.Text}); err != nil {
			return err
		}
		m.direct.Store(m.reporter != nil)
		return nil
	}
	c.MIMEType = mime
	return m.report(ctx, ToolOutput{Tool: m.name, Content: c})
}

// Stream starts a direct response sent in chunks: a
// [DirectResponseStart] now, a [DirectResponseChunk] per Write, and a
// [DirectResponseDone] on Close. It needs Capabilities.Streaming and
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
	if err := m.report(ctx, DirectResponseStart{Operator: m.name, ContentType: contentType}); err != nil {
		return nil, err
	}
	m.direct.Store(m.reporter != nil)
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
	return d.m.report(ctx, DirectResponseChunk{Operator: d.m.name, Text: chunk})
}

// Close ends the response. Closing twice does nothing.
func (d *DirectStream) Close(ctx context.Context) error {
	if d.closed {
		return nil
	}
	d.closed = true
	return d.m.report(ctx, DirectResponseDone{Operator: d.m.name})
}

// Widget sends a widget as a content item of type toolresult.MIMEWidget. It
// needs OutputWidget among Capabilities.OutputTypes.
func (m *Messenger) Widget(ctx context.Context, w toolresult.Widget) error {
	if err := m.allow(m != nil && m.caps.Outputs(OutputWidget), "widget output"); err != nil {
		return err
	}
	return m.Content(ctx, toolresult.Content{MIMEType: toolresult.MIMEWidget, Value: w}, false)
}

// Confirm asks the user a yes/no question and reports the answer: true only
// when the user accepted and answered yes. It needs
// Capabilities.Elicitation.
func (m *Messenger) Confirm(ctx context.Context, question string) (bool, error) {
	resp, err := m.ask(ctx, question, []string{"yes", "no"})
	if err != nil {
		return false, err
	}
	if resp.Action != elicit.Accept {
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
	if resp.Action != elicit.Accept {
		return "", fmt.Errorf("%w: %q (%s)", ErrDeclined, question, resp.Action)
	}
	choice, _ := resp.Content["answer"].(string)
	if !slices.Contains(options, choice) {
		return "", fmt.Errorf("operator: the answer %q to %q is not one of %q", choice, question, options)
	}
	return choice, nil
}

func (m *Messenger) ask(ctx context.Context, question string, options []string) (elicit.Response, error) {
	if m == nil || m.elicitor == nil {
		return elicit.Response{}, ErrNoElicitor
	}
	if err := m.allow(m.caps.Elicitation, "elicitation"); err != nil {
		return elicit.Response{}, err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return m.elicitor.Elicit(ctx, elicit.Request{
		ElicitationID: "elicit-" + hex.EncodeToString(b[:]),
		Tool:          m.name,
		Message:       question,
		Options:       options,
	})
}

// Elicitations is the table of a request's pending questions: Elicit
// reports the question and waits; Respond, called when the user's
// answer arrives (an HTTP handler), wakes it. It implements [elicit.Elicitor] and
// is safe for concurrent use.
type Elicitations struct {
	reporter Reporter
	mu       sync.Mutex
	pending  map[string]chan elicit.Response
}

// NewElicitations returns an empty table whose questions are reported
// to r (nil reports nothing).
func NewElicitations(r Reporter) *Elicitations {
	return &Elicitations{reporter: r, pending: map[string]chan elicit.Response{}}
}

// Elicit reports req and waits for its answer or for ctx to end.
func (t *Elicitations) Elicit(ctx context.Context, req elicit.Request) (elicit.Response, error) {
	ch := make(chan elicit.Response, 1)
	t.mu.Lock()
	t.pending[req.ElicitationID] = ch
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.pending, req.ElicitationID)
		t.mu.Unlock()
	}()
	if t.reporter != nil {
		if err := t.reporter.Report(ctx, req); err != nil {
			return elicit.Response{}, err
		}
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		return elicit.Response{}, ctx.Err()
	}
}

// Respond delivers the answer to a pending question. An id with no pending
// question is an error wrapping [ErrNoQuestion].
func (t *Elicitations) Respond(resp elicit.Response) error {
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
