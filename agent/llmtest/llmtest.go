package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
)

// Reply is one scripted answer.
type Reply struct {
	// Text is the answer.
	Text string
	// Thinking is extended thinking returned beside the answer.
	Thinking string
	// ToolCalls are the native tool calls the answer asks for, in order;
	// several in one reply are parallel calls of one model turn.
	ToolCalls []model.ToolCall
	// Usage is reported for the call.
	Usage model.Usage
	// StopReason is reported for the call; empty means "stop", or
	// "tool_calls" for a reply with ToolCalls.
	StopReason string
	// Chunks are the streamed pieces of Text. Nil means Text cut into pieces
	// of the model's chunk size (4 runes unless SetChunkSize says otherwise).
	// Thinking and tool-call arguments are cut by the chunk size.
	Chunks []string
	// Delay is waited before answering; a cancelled context ends the wait
	// with its error.
	Delay time.Duration
	// Hang makes the call block until its context ends, then return the
	// context's error: a provider that never answers.
	Hang bool
	// Wait, when set, holds the call until Wait is closed (or the call's
	// context ends, returning its error): a test decides when it answers.
	Wait <-chan struct{}
	// Model, when set, answers the call in place of the fields above
	// (after Delay and Wait): the request goes to Model as it is, through
	// Generate or Stream as the call came. See From.
	Model model.Model
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

// ToolCalls is a reply asking for the given tool calls, in one model turn.
func ToolCalls(calls ...model.ToolCall) Reply { return Reply{ToolCalls: calls} }

// ToolCall returns a tool call with id, the tool's name and args encoded as
// its JSON arguments (args may be a json.RawMessage or a string of JSON). It
// panics if args cannot be encoded, which is a mistake in the test.
func ToolCall(id, name string, args any) model.ToolCall {
	var raw json.RawMessage
	switch a := args.(type) {
	case json.RawMessage:
		raw = a
	case string:
		raw = json.RawMessage(a)
	default:
		b, err := json.Marshal(args)
		if err != nil {
			panic(fmt.Sprintf("llmtest.ToolCall: %v", err))
		}
		raw = b
	}
	return model.ToolCall{ID: id, Name: name, Arguments: raw}
}

// From is a reply that hands the call to m: a script that answers a few
// calls itself and leaves the rest to another model (a rule-based demo
// model, say) uses it as its Default or as the last reply of a rule.
func From(m model.Model) Reply { return Reply{Model: m} }

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
	// Request is the call as the model received it, through Generate and
	// Stream or as one of the servers read it off the wire. It is the
	// caller's request itself, not a copy, which model.Model's contract
	// lets a model keep: callers do not modify a request once sent.
	Request *model.Request
	// System is the text of the system messages.
	System string
	// Prompt is the text of the user messages.
	Prompt string
}

type rule struct {
	match   func(Call) bool
	replies []Reply
	next    int
}

// Model is a scripted model.Model. It answers each call with, in this order,
// the next reply of the first matching On rule, the next reply of the
// sequence, or the Default reply; a call with nothing left to answer fails
// with an error saying so. It streams replies in chunks, reports the
// scripted usage, records every call, and is safe for concurrent use.
type Model struct {
	mu        sync.Mutex
	seq       []Reply
	next      int
	rules     []*rule
	fallback  *Reply
	calls     []Call
	chunkSize int
	keep      int // most recent calls recorded; < 0 means all
	count     int // calls received
}

var _ model.Model = (*Model)(nil)

// New returns a model that answers calls with replies, in order.
func New(replies ...Reply) *Model { return &Model{seq: replies, chunkSize: 4, keep: -1} }

// KeepCalls bounds the recorded calls to the n most recent ones (none for
// n == 0), for benchmarks and long runs; by default every call is kept.
func (m *Model) KeepCalls(n int) *Model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keep = max(n, 0)
	if len(m.calls) > m.keep {
		m.calls = append(m.calls[:0:0], m.calls[len(m.calls)-m.keep:]...)
	}
	return m
}

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

func (m *Model) pick(c Call) (Reply, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count++
	switch {
	case m.keep < 0:
		m.calls = append(m.calls, c)
	case m.keep > 0:
		m.calls = append(m.calls, c)
		if len(m.calls) > m.keep {
			m.calls = m.calls[len(m.calls)-m.keep:]
		}
	}
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
		m.count, p)
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
