package memory

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Turn is the state of one conversation turn: the user's query and what the
// agent has done and obtained so far while answering it. Create one per
// request with [NewTurn] and pass it by pointer; its Results and Actions are
// safe for concurrent use by the steps of a workflow running in parallel.
type Turn struct {
	// ConversationID names the conversation the turn belongs to.
	ConversationID string
	// Query is the user's message that started the turn.
	Query string
	// Results holds the results of workflow steps and tool calls.
	Results Results
	// Actions records what the agent did.
	Actions Actions
}

// NewTurn returns an empty turn of the conversation for query.
func NewTurn(conversationID, query string) *Turn {
	return &Turn{ConversationID: conversationID, Query: query}
}

// Result is the outcome of one workflow step or tool call.
type Result struct {
	// ID identifies the result within the turn: a workflow step id
	// ("step_2") or a tool call id. Required.
	ID string
	// Name is a human-readable name: the step's name, the tool's name.
	Name string
	// Output is what the step or tool produced. The assembler renders a
	// string as is, a fmt.Stringer with String, anything else as JSON.
	Output any
	// Err is the failure, if the step or tool failed.
	Err error
	// Time is when the result was stored; Put sets it when zero.
	Time time.Time
}

// Text renders the result for a prompt: its Output as text, or "error: ..."
// when Err is set.
func (r Result) Text() string {
	if r.Err != nil {
		return "error: " + r.Err.Error()
	}
	return renderValue(r.Output)
}

func renderValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []byte:
		return string(v)
	case json.RawMessage:
		return string(v)
	case fmt.Stringer:
		return v.String()
	case error:
		return v.Error()
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}

// Results stores the results of the current turn by id, in the order they
// were first stored. The zero value is empty and ready; it is safe for
// concurrent use and must not be copied after first use.
type Results struct {
	mu    sync.RWMutex
	order []string
	byID  map[string]Result
}

// Put stores r. A result with the same ID (a retried step) replaces the
// earlier one and keeps its place in the order. An empty ID is an error.
func (s *Results) Put(r Result) error {
	if r.ID == "" {
		return fmt.Errorf("memory: Result.ID is empty; set it to the step or tool call id")
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = make(map[string]Result)
	}
	if _, ok := s.byID[r.ID]; !ok {
		s.order = append(s.order, r.ID)
	}
	s.byID[r.ID] = r
	return nil
}

// Get returns the result stored under id.
func (s *Results) Get(id string) (Result, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.byID[id]
	return r, ok
}

// All returns every result, in the order they were first stored.
func (s *Results) All() []Result {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Result, len(s.order))
	for i, id := range s.order {
		out[i] = s.byID[id]
	}
	return out
}

// IDs returns the ids of the stored results, in order.
func (s *Results) IDs() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.order)
}

// Len returns the number of results.
func (s *Results) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.order)
}

// Status is the state of an [Action].
type Status string

// Action statuses.
const (
	StatusRunning   Status = "running"
	StatusSucceeded Status = "succeeded"
	StatusFailed    Status = "failed"
)

// ActionID identifies an action within its turn's [Actions]; the first
// action is 1.
type ActionID int

// Action is one thing the agent did this turn: a decision, a tool
// call, a workflow.
type Action struct {
	// ID is the action's number in the turn, from 1.
	ID ActionID
	// Kind says what sort of action it was: "call_tool", "workflow",
	// "answer", "clarify", or a kind of your own.
	Kind string
	// Name names the target: the tool, operator or workflow goal.
	Name string
	// Detail is optional free text: the input, the agent's reasoning.
	Detail string
	// Status is running until [Actions.Finish] is called.
	Status Status
	// Err is the failure of a failed action.
	Err error
	// Started and Ended bound the action; Ended is zero while it runs.
	Started, Ended time.Time
}

// Duration returns how long the action took, or has been running so far.
func (a Action) Duration() time.Duration {
	if a.Ended.IsZero() {
		return time.Since(a.Started)
	}
	return a.Ended.Sub(a.Started)
}

// String renders the action as one line:
// "2. call_tool web_search (failed after 1.2s: timeout) — detail".
func (a Action) String() string {
	s := fmt.Sprintf("%d. %s", a.ID, a.Kind)
	if a.Name != "" {
		s += " " + a.Name
	}
	switch a.Status {
	case StatusRunning:
		s += " (running)"
	case StatusFailed:
		s += fmt.Sprintf(" (failed after %s", a.Duration().Round(time.Millisecond))
		if a.Err != nil {
			s += ": " + a.Err.Error()
		}
		s += ")"
	default:
		s += fmt.Sprintf(" (%s in %s)", a.Status, a.Duration().Round(time.Millisecond))
	}
	if a.Detail != "" {
		s += ": " + a.Detail
	}
	return s
}

// Actions is the action history of the current turn. The zero value is
// empty and ready; it is safe for concurrent use and must not be copied
// after first use.
type Actions struct {
	mu   sync.RWMutex
	list []Action
}

// Begin records the start of an action and returns its id, for Finish.
func (h *Actions) Begin(kind, name, detail string) ActionID {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	id := ActionID(len(h.list) + 1)
	h.list = append(h.list, Action{ID: id, Kind: kind, Name: name, Detail: detail, Status: StatusRunning, Started: now})
	return id
}

// Finish records the end of action id: failed if err is not nil, succeeded
// otherwise. Finishing an unknown or finished action is an error.
func (h *Actions) Finish(id ActionID, err error) error {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if id < 1 || int(id) > len(h.list) {
		return fmt.Errorf("memory: no action %d this turn; use the id Begin returned", id)
	}
	a := &h.list[id-1]
	if a.Status != StatusRunning {
		return fmt.Errorf("memory: action %d (%s %s) already finished as %s", id, a.Kind, a.Name, a.Status)
	}
	a.Ended, a.Err, a.Status = now, err, StatusSucceeded
	if err != nil {
		a.Status = StatusFailed
	}
	return nil
}

// Record adds an action that already happened and returns its id. Its ID is
// assigned; a zero Status becomes succeeded (failed when Err is set), and
// a zero Started becomes now.
func (h *Actions) Record(a Action) ActionID {
	now := time.Now()
	if a.Started.IsZero() {
		a.Started = now
	}
	if a.Status == "" {
		a.Status = StatusSucceeded
		if a.Err != nil {
			a.Status = StatusFailed
		}
	}
	if a.Status != StatusRunning && a.Ended.IsZero() {
		a.Ended = a.Started
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	a.ID = ActionID(len(h.list) + 1)
	h.list = append(h.list, a)
	return a.ID
}

// All returns the actions in the order they began.
func (h *Actions) All() []Action {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return slices.Clone(h.list)
}

// Len returns the number of actions.
func (h *Actions) Len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.list)
}
