package swarm

import (
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/graph"
)

// Step statuses of a plan.
const (
	StepPending = "pending" // ready to run once its dependencies are done
	StepDone    = "done"    // an agent returned an approved (or fixed) result
	StepFailed  = "failed"  // the agent gave up; the supervisor may plan around it
)

// Step is one item of the supervisor's plan.
type Step struct {
	// ID names the step, such as "step_1"; unique within a plan.
	ID string `json:"id" jsonschema:"description=Unique step id such as step_1" validate:"required"`
	// Agent is the agent that runs the step, as listed in the prompt.
	Agent string `json:"agent" jsonschema:"description=The agent that runs the step" validate:"required"`
	// Task is what the agent is asked to do, self-contained: values it needs
	// from earlier steps are written into it.
	Task string `json:"task" jsonschema:"description=What the agent must do; self-contained" validate:"required"`
	// Status is pending, done or failed.
	Status string `json:"status" jsonschema:"enum=pending,enum=done,enum=failed" validate:"required,oneof=pending done failed"`
	// DependsOn lists the steps whose results this one needs.
	DependsOn []string `json:"depends_on,omitempty" jsonschema:"description=Ids of steps whose results this step needs"`
}

// Result is what an agent returns to the supervisor for one step.
type Result struct {
	// Step and Agent say which step and agent.
	Step  string `json:"step"`
	Agent string `json:"agent"`
	// Task is the task as the agent received it.
	Task string `json:"task"`
	// Thought is the agent's reasoning for its last attempt.
	Thought string `json:"thought,omitempty"`
	// Tool and Arguments are the last tool call the agent made; Tool is
	// empty when the agent answered from the model (the LLM-only path).
	Tool      string         `json:"tool,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	// Output is the approved (or fixed) output; for a failed step, the
	// last output, if any.
	Output string `json:"output,omitempty"`
	// OK is true when the reflection approved or fixed the output.
	OK bool `json:"ok"`
	// Error says why the agent gave up, when OK is false.
	Error string `json:"error,omitempty"`
	// Attempts counts the executions; more than one means reflection
	// rejected an output.
	Attempts int `json:"attempts"`
	// Reviews are the reflection's verdicts (supervisor.Critique), one per
	// attempt.
	Reviews []supervisor.Review `json:"reviews,omitempty"`
	// Skills are the tasks of the past executions the agent was shown.
	Skills []string `json:"skills,omitempty"`
	// Citations are the sources the output came from.
	Citations []Citation `json:"citations,omitempty"`
}

// Citation is one source a result used: the seed's source tracking.
type Citation struct {
	// Source names the document, page, file or tool the content came from.
	Source string `json:"source"`
	// Locator says where in the source: a section, URL, path or the tool's
	// arguments.
	Locator string `json:"locator,omitempty"`
	// Step and Agent say which step used it.
	Step  string `json:"step"`
	Agent string `json:"agent,omitempty"`
}

// Trace entry kinds: the seed's "full trace" of a run.
const (
	TraceTransition = "transition"  // the supervisor routed (Text: "supervisor -> agent")
	TraceThought    = "thought"     // the supervisor's or an agent's reasoning
	TraceToolCall   = "tool_call"   // an agent called a tool (Text: "server.tool {args}")
	TraceToolOutput = "tool_output" // what the tool returned, or its error
	TraceAnswer     = "llm_output"  // an agent answered from the model (LLM-only step)
	TraceReflection = "reflection"  // the reflection's verdict and critique
)

// TraceEntry is one entry of a run's trace.
type TraceEntry struct {
	// Kind is one of the Trace* constants.
	Kind string `json:"kind"`
	// Node is the supervisor or agent that wrote it; Step the plan step.
	Node string `json:"node"`
	Step string `json:"step,omitempty"`
	// Text is the entry's content.
	Text string `json:"text"`
}

// State is the swarm graph's state, the seed's GraphState: the request,
// append-only logs of tasks and results, the current plan (overwritten by
// each supervisor turn), a shared blackboard and the routing.
type State struct {
	// Request is the user's task.
	Request string
	// Plan is the current plan; each supervisor turn replaces it.
	Plan []Step
	// Tasks logs every assignment the supervisor made (append-only).
	Tasks []Step
	// Results logs every agent result (append-only).
	Results []Result
	// Thoughts logs the supervisor's reasoning, one per turn (append-only).
	Thoughts []string
	// Messages is the chat history (append-only): the request, each agent's
	// result and the answer.
	Messages model.Messages
	// Citations logs the sources the results used, with the step that used
	// each (append-only).
	Citations []Citation
	// Trace logs transitions, thoughts, tool calls and outputs and
	// reflections (append-only).
	Trace []TraceEntry
	// Blackboard is shared context: each agent writes its outputs under
	// "<step>.output"; merged key by key.
	Blackboard map[string]string
	// Next is where the supervisor routes: agent names, or QA.
	Next []string
	// Turns counts supervisor turns.
	Turns int
	// Stalls counts supervisor turns in a row without progress: routing
	// to the same agents with no new successful result, or selecting agents
	// whose steps are already done. Two trip the circuit breaker.
	Stalls int
	// Answer is the final answer, written by QA.
	Answer string
	// Status is "complete", "partial" or "failed", written by QA.
	Status string
	// Usage sums the tokens of every model call.
	Usage model.Usage
}

// Field handles of State: each names the field's reducer.
var (
	requestF    = graph.Replace(func(s *State) *string { return &s.Request })
	planF       = graph.Replace(func(s *State) *[]Step { return &s.Plan })
	tasksF      = graph.Append(func(s *State) *[]Step { return &s.Tasks })
	resultsF    = graph.Append(func(s *State) *[]Result { return &s.Results })
	thoughtsF   = graph.Append(func(s *State) *[]string { return &s.Thoughts })
	messagesF   = graph.Declare(func(s *State) *model.Messages { return &s.Messages })
	citationsF  = graph.Append(func(s *State) *[]Citation { return &s.Citations })
	traceF      = graph.Append(func(s *State) *[]TraceEntry { return &s.Trace })
	blackboardF = graph.MergeMap(func(s *State) *map[string]string { return &s.Blackboard })
	nextF       = graph.Replace(func(s *State) *[]string { return &s.Next })
	turnsF      = graph.Replace(func(s *State) *int { return &s.Turns })
	stallsF     = graph.Replace(func(s *State) *int { return &s.Stalls })
	answerF     = graph.Replace(func(s *State) *string { return &s.Answer })
	statusF     = graph.Replace(func(s *State) *string { return &s.Status })
	usageF      = graph.Declare(func(s *State) *model.Usage { return &s.Usage })
)

// AgentState is the state of one agent's subgraph: its execution and
// reflection loop for one step.
type AgentState struct {
	// Step is the assignment.
	Step Step
	// Context is what the agent may see of the run: the blackboard's keys
	// and the last results.
	Context string
	// Skills are past successful executions similar to the task.
	Skills []Skill
	// Thought is the current attempt's reasoning.
	Thought string
	// Tool and Arguments are the current attempt's tool call; Tool is empty
	// when the agent answers from the model.
	Tool      string
	Arguments map[string]any
	// Output is the current attempt's output; ToolErr is set when the call
	// failed.
	Output  string
	ToolErr string
	// Citations are the sources of the current attempt's output.
	Citations []Citation
	// Trace logs the agent's thoughts, calls, outputs and reflections.
	Trace []TraceEntry
	// Attempts counts executions.
	Attempts int
	// Reviews are the verdicts so far (append-only).
	Reviews []supervisor.Review
	// Feedback is the last REJECTED verdict's feedback.
	Feedback string
	// Final is the result handed back to the supervisor.
	Final Result
	// Usage sums the agent's model calls.
	Usage model.Usage
}

var (
	aContextF  = graph.Replace(func(s *AgentState) *string { return &s.Context })
	aSkillsF   = graph.Replace(func(s *AgentState) *[]Skill { return &s.Skills })
	aThoughtF  = graph.Replace(func(s *AgentState) *string { return &s.Thought })
	aCitesF    = graph.Replace(func(s *AgentState) *[]Citation { return &s.Citations })
	aTraceF    = graph.Append(func(s *AgentState) *[]TraceEntry { return &s.Trace })
	aToolF     = graph.Replace(func(s *AgentState) *string { return &s.Tool })
	aArgsF     = graph.Replace(func(s *AgentState) *map[string]any { return &s.Arguments })
	aOutputF   = graph.Replace(func(s *AgentState) *string { return &s.Output })
	aToolErrF  = graph.Replace(func(s *AgentState) *string { return &s.ToolErr })
	aAttemptsF = graph.Replace(func(s *AgentState) *int { return &s.Attempts })
	aReviewsF  = graph.Append(func(s *AgentState) *[]supervisor.Review { return &s.Reviews })
	aFeedbackF = graph.Replace(func(s *AgentState) *string { return &s.Feedback })
	aFinalF    = graph.Replace(func(s *AgentState) *Result { return &s.Final })
	aUsageF    = graph.Declare(func(s *AgentState) *model.Usage { return &s.Usage })
)
