package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/tmc/langchaingo/llms"
)

// Reply is one scripted answer.
type Reply struct {
	// Text is the answer.
	Text string
	// Thinking is extended thinking returned beside the answer.
	Thinking string
	// ToolCalls are tool calls the answer asks for.
	ToolCalls []llms.ToolCall
	// Usage is reported for the call.
	Usage agent.TokenUsage
	// StopReason is reported for the call; empty means "stop".
	StopReason string
	// Chunks are the streamed pieces of Text. Nil means Text cut into pieces
	// of the model's chunk size (4 runes unless SetChunkSize says otherwise).
	Chunks []string
	// Delay is waited before answering; a cancelled context ends the wait
	// with its error.
	Delay time.Duration
	// Hang makes the call block until its context ends, then return the
	// context's error: a provider that never answers.
	Hang bool
	// Err, when set, is returned instead of an answer.
	Err error
}

// Text is a reply with the given answer.
func Text(s string) Reply { return Reply{Text: s} }

// JSON is a reply whose answer is v encoded as JSON. It panics if v cannot
// be encoded, which is a mistake in the test.
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llmtest.JSON: %v", err))
	}
	return Reply{Text: string(b)}
}

// Fail is a reply that fails with err.
func Fail(err error) Reply { return Reply{Err: err} }

// Transient is a reply that fails like a provider answering HTTP 503, which
// the client retries.
func Transient() Reply {
	return Reply{Err: &agent.ProviderError{Provider: "llmtest", StatusCode: http.StatusServiceUnavailable,
		Err: errors.New("llmtest: scripted transient failure (503 service unavailable)")}}
}

// RateLimited is a reply that fails like a provider answering HTTP 429 with
// a Retry-After of d, which the client retries after d.
func RateLimited(d time.Duration) Reply {
	return Reply{Err: &agent.ProviderError{Provider: "llmtest", StatusCode: http.StatusTooManyRequests, RetryAfter: d,
		Err: errors.New("llmtest: scripted rate limit (429 too many requests)")}}
}

// Timeout is a reply that fails like a request whose connection timed out,
// which the client retries.
func Timeout() Reply {
	return Reply{Err: &agent.ProviderError{Provider: "llmtest", Err: timeoutError{}}}
}

// Hang is a reply that never comes: the call blocks until its context ends.
func Hang() Reply { return Reply{Hang: true} }

type timeoutError struct{}

func (timeoutError) Error() string   { return "llmtest: scripted timeout (i/o timeout)" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// Call is one recorded call of the model.
type Call struct {
	// Messages are the messages the model received.
	Messages []llms.MessageContent
	// System is the text of the system messages.
	System string
	// Prompt is the text of the human messages.
	Prompt string
	// Options are the call options.
	Options llms.CallOptions
}

type rule struct {
	match   func(Call) bool
	replies []Reply
	next    int
}

// Model is a scripted llms.Model. It answers each call with, in this order,
// the next reply of the first matching On rule, the next reply of the
// sequence, or the Default reply; a call with nothing left to answer fails
// with an error saying so. It streams replies in chunks, reports the
// scripted usage (under agent.UsageKey), records every call, and is safe
// for concurrent use.
type Model struct {
	mu        sync.Mutex
	seq       []Reply
	next      int
	rules     []*rule
	fallback  *Reply
	calls     []Call
	chunkSize int
}

var _ llms.Model = (*Model)(nil)

// New returns a model that answers calls with replies, in order.
func New(replies ...Reply) *Model { return &Model{seq: replies, chunkSize: 4} }

// Add appends replies to the sequence.
func (m *Model) Add(replies ...Reply) *Model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq = append(m.seq, replies...)
	return m
}

// On answers calls whose human prompt contains substr with replies, in
// order; the last one repeats. Rules are tried in the order they were added.
func (m *Model) On(substr string, replies ...Reply) *Model {
	return m.OnFunc(func(c Call) bool { return strings.Contains(c.Prompt, substr) }, replies...)
}

// OnFunc is On with any predicate over the call.
func (m *Model) OnFunc(match func(Call) bool, replies ...Reply) *Model {
	if len(replies) == 0 {
		panic("llmtest: On needs at least one reply")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rules = append(m.rules, &rule{match: match, replies: replies})
	return m
}

// Default answers every call that nothing else answers.
func (m *Model) Default(r Reply) *Model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fallback = &r
	return m
}

// SetChunkSize sets the streamed chunk length in runes for replies without
// Chunks.
func (m *Model) SetChunkSize(n int) *Model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.chunkSize = max(n, 1)
	return m
}

// Calls returns the calls received so far.
func (m *Model) Calls() []Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Call(nil), m.calls...)
}

// Remaining returns how many sequence replies have not been used.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.seq) - m.next
}

// Call implements llms.Model.
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// GenerateContent implements llms.Model.
func (m *Model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	call := Call{Messages: messages, Options: opts}
	call.System, call.Prompt = texts(messages)
	r, chunkSize, err := m.pick(call)
	if err != nil {
		return nil, err
	}
	if r.Hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if r.Delay > 0 {
		t := time.NewTimer(r.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts.StreamingReasoningFunc != nil && r.Thinking != "" {
		for _, c := range split(r.Thinking, chunkSize) {
			if err := opts.StreamingReasoningFunc(ctx, []byte(c), nil); err != nil {
				return nil, err
			}
		}
	}
	if opts.StreamingFunc != nil {
		chunks := r.Chunks
		if chunks == nil {
			chunks = split(r.Text, chunkSize)
		}
		for _, c := range chunks {
			if err := opts.StreamingFunc(ctx, []byte(c)); err != nil {
				return nil, err
			}
		}
	}
	stop := r.StopReason
	if stop == "" {
		stop = "stop"
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		Content:          r.Text,
		ReasoningContent: r.Thinking,
		StopReason:       stop,
		ToolCalls:        r.ToolCalls,
		GenerationInfo:   map[string]any{agent.UsageKey: r.Usage},
	}}}, nil
}

func (m *Model) pick(c Call) (Reply, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, c)
	for _, r := range m.rules {
		if r.match(c) {
			rep := r.replies[min(r.next, len(r.replies)-1)]
			r.next++
			return rep, m.chunkSize, nil
		}
	}
	if m.next < len(m.seq) {
		m.next++
		return m.seq[m.next-1], m.chunkSize, nil
	}
	if m.fallback != nil {
		return *m.fallback, m.chunkSize, nil
	}
	p := c.Prompt
	if len(p) > 80 {
		p = p[:80] + "..."
	}
	return Reply{}, 0, fmt.Errorf("llmtest: no reply scripted for call %d (prompt %q): add one with New, Add, On or Default",
		len(m.calls), p)
}

func texts(msgs []llms.MessageContent) (system, prompt string) {
	var s, p []string
	for _, mc := range msgs {
		for _, part := range mc.Parts {
			t, ok := part.(llms.TextContent)
			if !ok {
				continue
			}
			switch mc.Role {
			case llms.ChatMessageTypeSystem:
				s = append(s, t.Text)
			case llms.ChatMessageTypeHuman, llms.ChatMessageTypeGeneric:
				p = append(p, t.Text)
			}
		}
	}
	return strings.Join(s, "\n"), strings.Join(p, "\n")
}

func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
