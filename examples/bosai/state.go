package bosai

import (
	"time"

	"github.com/agentgraph/agentgraph/graph"
)

// AgentName names a specialist agent: AgentKnowledge, AgentAPI or
// AgentComputation. The planner and the composer appear in the trace as
// AgentPlanner and AgentComposer.
type AgentName string

// The agents of a run.
const (
	// AgentPlanner chooses the specialists for a request.
	AgentPlanner AgentName = "planner"
	// AgentKnowledge retrieves data through MCP (the knowledge server's
	// search_knowledge tool) and returns it as a table: the seed's SQL agent.
	AgentKnowledge AgentName = "knowledge"
	// AgentAPI plans an HTTP call from an endpoint catalogue and makes it:
	// the seed's API Docs agent.
	AgentAPI AgentName = "api"
	// AgentComputation writes a small Starlark program and runs it in the
	// calculator server's sandbox (run_code): the seed's computation agent.
	AgentComputation AgentName = "computation"
	// AgentComposer reads every agent's result and writes the answer.
	AgentComposer AgentName = "composer"
)

// Request is one question for Bos-AI (the seed's AgentRequest).
type Request struct {
	// Question is the user's question. Required.
	Question string `json:"question"`
	// Context is key-value context shared with every agent. The current
	// date and time are added under "current_datetime_utc" and
	// "current_date" unless already set.
	Context map[string]string `json:"context,omitempty"`
	// Prefer lists agents to run first, in this order, when chosen.
	Prefer []AgentName `json:"prefer,omitempty"`
	// Disable lists agents that must not run.
	Disable []AgentName `json:"disable,omitempty"`
	// Thread names the run's checkpoint thread. Empty means a new id.
	Thread string `json:"thread,omitempty"`
}

// Decision is the planner's output (the seed's PlannerDecision).
type Decision struct {
	// Agents are the chosen agents, in the order their results are merged.
	Agents []AgentName `json:"agents"`
	// Rationale says why.
	Rationale string `json:"rationale"`
	// Confidence is between 0 and 1.
	Confidence float64 `json:"confidence" validate:"gte=0,lte=1"`
	// Fallback is set when the model gave no usable decision and the
	// keyword heuristic decided (confidence 0.4).
	Fallback bool `json:"fallback,omitempty"`
}

// Status is an agent's execution status.
type Status string

// The statuses an AgentResult ends with.
const (
	StatusSucceeded Status = "succeeded"
	StatusFailed    Status = "failed"
)

// AgentResult is what one specialist agent produced (the seed's
// AgentResult). A failed agent has a result too: Status is StatusFailed
// and Error says why.
type AgentResult struct {
	// Agent is the agent that ran.
	Agent AgentName `json:"agent"`
	// Status is StatusSucceeded or StatusFailed.
	Status Status `json:"status"`
	// Answer is the agent's finding in a sentence or two; empty on failure.
	Answer string `json:"answer,omitempty"`
	// Table is the agent's data as a table, when it has some.
	Table *TabularResult `json:"table,omitempty"`
	// Error says why the agent failed; nil on success.
	Error *AgentError `json:"error,omitempty"`
	// Latency is how long the agent ran.
	Latency time.Duration `json:"latency"`
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
