package bosai

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/graph"
)

// AgentName names a specialist agent: AgentSQL, AgentAPI or
// AgentComputation. The planner and the composer appear in the trace as
// AgentPlanner and AgentComposer.
type AgentName string

// The agents of a run.
const (
	// AgentPlanner chooses the specialists for a request.
	AgentPlanner AgentName = "planner"
	// AgentSQL writes SQL for the question, checks it and runs it
	// read-only through MCP database tools, returning a table: the seed's
	// SQL agent.
	AgentSQL AgentName = "sql"
	// AgentAPI plans an HTTP call from an endpoint catalogue and makes it:
	// the seed's API Docs agent.
	AgentAPI AgentName = "api_docs"
	// AgentComputation writes a small Starlark program and runs it in the
	// calculator server's sandbox (run_code): the seed's computation agent.
	AgentComputation AgentName = "computation"
	// AgentComposer reads every agent's result and writes the answer.
	AgentComposer AgentName = "composer"
)

// Request is one question for Bos-AI (the seed's AgentRequest).
type Request struct {
	// Question is the user's question: 1 to MaxQuestionLen bytes.
	// Required.
	Question string `json:"question"`
	// Context is key-value context shared with every agent: its keys and
	// values together at most MaxContextLen bytes. The current date and
	// time are added under "current_datetime_utc" and "current_date"
	// unless already set.
	Context map[string]string `json:"context,omitempty"`
	// Prefer lists agents to run first, in this order, when chosen; each
	// at most once.
	Prefer []AgentName `json:"prefer_agents,omitempty"`
	// Disable lists agents that must not run, each at most once.
	Disable []AgentName `json:"disable_agents,omitempty"`
	// MaxTurns bounds how many agents run; the planner's later choices
	// are reported as skipped. Zero means no bound.
	MaxTurns int `json:"max_turns,omitempty"`
	// IncludeData, when false, leaves tables out of the response. Nil
	// means true.
	IncludeData *bool `json:"include_data,omitempty"`
	// Trace asks for the trace in the response (Response.Trace). Run
	// streams the trace events either way.
	Trace bool `json:"trace,omitempty"`
	// SystemPrompt replaces the composer's system prompt (ComposerSystem):
	// at most MaxSystemPromptLen bytes.
	SystemPrompt string `json:"system_prompt,omitempty"`
}

// The length limits of a Request, in bytes: every run's checkpoints and
// every agent's prompt hold the question, and the composer's the system
// prompt.
const (
	// MaxQuestionLen bounds Request.Question.
	MaxQuestionLen = 8 << 10
	// MaxSystemPromptLen bounds Request.SystemPrompt.
	MaxSystemPromptLen = 32 << 10
	// MaxContextLen bounds Request.Context: its keys' and values' bytes
	// together.
	MaxContextLen = 16 << 10
)

// Decision is the planner's output (the seed's PlannerDecision).
type Decision struct {
	// Agents are the chosen agents, in the order their results are merged.
	Agents []AgentName `json:"agents"`
	// Rationale says why.
	Rationale string `json:"rationale"`
	// Confidence is between 0 and 1.
	Confidence float64 `json:"confidence" validate:"gte=0,lte=1"`
	// Skipped are chosen agents beyond Request.MaxTurns: they do not run
	// and their results say StatusSkipped.
	Skipped []AgentName `json:"skipped,omitempty"`
	// Fallback is set when the model gave no usable decision and the
	// keyword heuristic decided (confidence 0.4).
	Fallback bool `json:"fallback,omitempty"`
}

// Status is an agent's execution status.
type Status string

// The statuses of an agent: pending (chosen, not started), running, and
// the three an AgentResult ends with.
const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusSucceeded Status = "succeeded"
	StatusFailed    Status = "failed"
	// StatusSkipped: chosen by the planner but beyond Request.MaxTurns.
	StatusSkipped Status = "skipped"
)

// AgentResult is what one specialist agent produced (the seed's
// AgentResult). A failed agent has a result too: Status is StatusFailed
// and Error says why.
type AgentResult struct {
	// Agent is the agent that ran.
	Agent AgentName `json:"agent"`
	// Status is StatusSucceeded, StatusFailed or StatusSkipped.
	Status Status `json:"status"`
	// Answer is the agent's finding in a sentence or two; empty on failure.
	Answer string `json:"answer,omitempty"`
	// Table is the agent's data as a table, when it has some.
	Table *TabularResult `json:"tabular,omitempty"`
	// Error says why the agent failed; nil on success.
	Error *AgentError `json:"error,omitempty"`
	// LatencyMS is how long the agent ran, in milliseconds.
	LatencyMS float64 `json:"latency_ms"`
	// Attempts are the SQL agent's queries, failed ones with their error.
	Attempts []SQLAttempt `json:"attempts,omitempty"`
}

// TabularResult is tabular data (the seed's TabularResult): rows as maps
// from column name to value.
type TabularResult struct {
	// Columns are the column names, in display order.
	Columns []string `json:"columns"`
	// Rows map column names to values as decoded from JSON (numbers are
	// float64). A row may lack a column.
	Rows []map[string]any `json:"rows"`
	// RowCount is len(Rows).
	RowCount int `json:"row_count"`
}

// ErrorKind classifies an agent's failure, after the seed's error
// hierarchy.
type ErrorKind string

// The kinds of AgentError.
const (
	// KindPlanningDeclined: the agent's model found nothing to do.
	KindPlanningDeclined ErrorKind = "planning_declined"
	// KindQuery: no SQL query succeeded within MaxSQLAttempts.
	KindQuery ErrorKind = "query_error"
	// KindTool: an MCP tool call failed or reported an error.
	KindTool ErrorKind = "tool_error"
	// KindHTTP: an HTTP call failed or answered with an error status.
	KindHTTP ErrorKind = "http_error"
	// KindSandbox: the computation sandbox refused or failed the program.
	KindSandbox ErrorKind = "sandbox_violation"
	// KindModel: the agent's model call failed.
	KindModel ErrorKind = "model_error"
)

// AgentError is the error of a failed agent, kept in its AgentResult.
type AgentError struct {
	// Agent is the agent that failed.
	Agent AgentName `json:"agent"`
	// Kind classifies the failure.
	Kind ErrorKind `json:"kind"`
	// Message is the underlying error's text.
	Message string `json:"message"`
}

// Error implements error.
func (e *AgentError) Error() string {
	return "bosai: agent " + string(e.Agent) + ": " + string(e.Kind) + ": " + e.Message
}

// TraceKind is the type of a trace event (the seed's TraceEventType).
type TraceKind string

// The trace event types.
const (
	TraceDecision TraceKind = "decision"
	TraceTool     TraceKind = "tool"
	TraceMessage  TraceKind = "message"
	TraceResult   TraceKind = "result"
	TraceError    TraceKind = "error"
)

// TraceEvent is one step of a run, as it happened (the seed's TraceEvent).
type TraceEvent struct {
	// Kind is the event's type.
	Kind TraceKind `json:"kind"`
	// Agent is the agent that reported it: a specialist, AgentPlanner or
	// AgentComposer.
	Agent AgentName `json:"agent"`
	// Message says in words what happened.
	Message string `json:"message"`
	// Data holds the event's details: the chosen agents and confidence,
	// a query or program, an HTTP call's URL, status and attempts, an
	// error, an answer.
	Data map[string]any `json:"data,omitempty"`
	// Time is when it happened, in UTC.
	Time time.Time `json:"time"`
}

// Response is the answer to a Request (the seed's OrchestratorResponse).
type Response struct {
	// Answer is the composed answer.
	Answer string `json:"answer"`
	// Data is the table of the first successful agent that returned one.
	Data *TabularResult `json:"data,omitempty"`
	// Plan is the planner's decision.
	Plan Decision `json:"plan"`
	// Results holds every agent's result, failed ones included, in plan
	// order.
	Results []AgentResult `json:"results"`
	// Partial is set when an agent failed or the composer fell back to
	// listing the results.
	Partial bool `json:"partial,omitempty"`
	// Trace is the run's trace: the planner's events, each agent's in plan
	// order, then the composer's.
	Trace []TraceEvent `json:"trace"`
	// Thread is the checkpoint thread the run was saved under.
	Thread string `json:"thread"`
}

// State is the graph's state (the seed's OrchestratorState). Each field
// merges by the reducer of its handle below.
type State struct {
	// Request is the request, with the temporal context added.
	Request Request
	// Plan is the planner's decision.
	Plan Decision
	// Pending counts the agents still to report: the planner adds the
	// number it chose and each agent subtracts one (the seed's
	// pending_agents, decremented).
	Pending int
	// Results gathers the agents' results in plan order.
	Results []AgentResult
	// Trace gathers the trace in plan order.
	Trace []TraceEvent
	// Response is the composer's output.
	Response Response
}

// The state's field handles, each naming its reducer.
var (
	fRequest  = graph.Replace(func(s *State) *Request { return &s.Request })
	fPlan     = graph.Replace(func(s *State) *Decision { return &s.Plan })
	fPending  = graph.Sum(func(s *State) *int { return &s.Pending })
	fResults  = graph.Append(func(s *State) *[]AgentResult { return &s.Results })
	fTrace    = graph.Append(func(s *State) *[]TraceEvent { return &s.Trace })
	fResponse = graph.Replace(func(s *State) *Response { return &s.Response })
)

// clipName returns a, cut to 64 bytes for an error message.
func clipName(a AgentName) string {
	if len(a) > 64 {
		return string(a[:64]) + "..."
	}
	return string(a)
}

// ErrInvalidRequest wraps every error of Request.Validate.
var ErrInvalidRequest = errors.New("bosai: invalid request")

// Normalize returns the request with agent names trimmed and in lower case.
func (r Request) Normalize() Request {
	norm := func(in []AgentName) []AgentName {
		if in == nil {
			return nil
		}
		out := make([]AgentName, len(in))
		for i, a := range in {
			out[i] = AgentName(strings.ToLower(strings.TrimSpace(string(a))))
		}
		return out
	}
	r.Prefer, r.Disable = norm(r.Prefer), norm(r.Disable)
	return r
}

// Validate checks a normalized request: a question of at most
// MaxQuestionLen bytes, a system prompt of at most MaxSystemPromptLen, a
// context of at most MaxContextLen, known agent names in Prefer and
// Disable, each at most once, a MaxTurns that is not negative. Its errors wrap
// ErrInvalidRequest (and ErrEmptyQuestion for an empty question) and name
// the field.
func (r Request) Validate() error {
	var errs []error
	if strings.TrimSpace(r.Question) == "" {
		errs = append(errs, ErrEmptyQuestion)
	}
	if len(r.Question) > MaxQuestionLen {
		errs = append(errs, fmt.Errorf("%w: question is %d bytes; the limit is %d (MaxQuestionLen): shorten it", ErrInvalidRequest, len(r.Question), MaxQuestionLen))
	}
	if len(r.SystemPrompt) > MaxSystemPromptLen {
		errs = append(errs, fmt.Errorf("%w: system_prompt is %d bytes; the limit is %d (MaxSystemPromptLen): shorten it", ErrInvalidRequest, len(r.SystemPrompt), MaxSystemPromptLen))
	}
	ctxLen := 0
	for k, v := range r.Context {
		ctxLen += len(k) + len(v)
	}
	if ctxLen > MaxContextLen {
		errs = append(errs, fmt.Errorf("%w: context is %d bytes (keys and values); the limit is %d (MaxContextLen): send less", ErrInvalidRequest, ctxLen, MaxContextLen))
	}
	for field, names := range map[string][]AgentName{"prefer_agents": r.Prefer, "disable_agents": r.Disable} {
		seen := map[AgentName]bool{}
		for _, a := range names {
			if _, ok := specOf(a); !ok {
				errs = append(errs, fmt.Errorf("%w: %s: %q is not an agent; the agents are %s", ErrInvalidRequest, field, clipName(a), validAgents()))
				break
			}
			if seen[a] {
				errs = append(errs, fmt.Errorf("%w: %s names %q twice; name each agent once", ErrInvalidRequest, field, a))
				break
			}
			seen[a] = true
		}
	}
	if r.MaxTurns < 0 {
		errs = append(errs, fmt.Errorf("%w: max_turns is %d; give 0 (no bound) or more", ErrInvalidRequest, r.MaxTurns))
	}
	return errors.Join(errs...)
}
