package swarm

import (
	"fmt"
	"strings"

	"github.com/agentgraph/agentgraph/examples/supervisor"
)

// EventKind says what an Event reports.
type EventKind string

// Event kinds, in the order a run produces them.
const (
	EventPlan    EventKind = "plan"    // the supervisor's plan and routing (Plan, Text: thought, Agents)
	EventSkills  EventKind = "skills"  // an agent retrieved past skills (Skills)
	EventExecute EventKind = "execute" // an agent called its tool (Tool, Arguments, Text: output, Error)
	EventReview  EventKind = "review"  // the reflection's verdict (Review)
	EventResult  EventKind = "result"  // an agent's result for the supervisor (Result)
	EventTeam    EventKind = "team"    // the Architect registered a team (Team, Text)
	EventAnswer  EventKind = "answer"  // QA wrote the answer (Text)
	EventDone    EventKind = "done"    // the run ended (Outcome); always last
)

// Event is one thing that happened in a run. Which fields are set depends
// on Kind.
type Event struct {
	// Kind says what happened.
	Kind EventKind `json:"kind"`
	// Thread is the run's checkpoint thread, for Resume.
	Thread string `json:"thread,omitempty"`
	// Agent and Step say who and which step, for agent events.
	Agent string `json:"agent,omitempty"`
	Step  string `json:"step,omitempty"`
	// Attempt numbers an agent's executions from 1.
	Attempt int `json:"attempt,omitempty"`
	// Text is the supervisor's thought, a tool's output or the answer.
	Text string `json:"text,omitempty"`
	// Thought is the agent's reasoning, for EventExecute.
	Thought string `json:"thought,omitempty"`
	// Plan is the plan and Agents the agents selected, for EventPlan.
	Plan   []Step   `json:"plan,omitempty"`
	Agents []string `json:"agents,omitempty"`
	// Skills are the retrieved skills, for EventSkills.
	Skills []Skill `json:"skills,omitempty"`
	// Tool and Arguments are the tool call and Error its failure, for
	// EventExecute.
	Tool      string         `json:"tool,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Error     string         `json:"error,omitempty"`
	// Review is the reflection's verdict, for EventReview.
	Review *supervisor.Review `json:"review,omitempty"`
	// Fallback is true, for EventReview, when the model gave no valid
	// verdict and the tool's status decided (supervisor.FallbackReview).
	Fallback bool `json:"fallback,omitempty"`
	// Result is the agent's result, for EventResult.
	Result *Result `json:"result,omitempty"`
	// Team is the team the Architect registered, for EventTeam.
	Team *TeamSpec `json:"team,omitempty"`
	// Outcome is the run's end, for EventDone.
	Outcome *Outcome `json:"outcome,omitempty"`
}

// String renders the event on one or a few lines, as the command prints it.
func (e Event) String() string {
	switch e.Kind {
	case EventPlan:
		var b strings.Builder
		fmt.Fprintf(&b, "supervisor: %s\n", e.Text)
		for _, s := range e.Plan {
			deps := ""
			if len(s.DependsOn) > 0 {
				deps = " after " + strings.Join(s.DependsOn, ",")
			}
			fmt.Fprintf(&b, "  [%s] %s %s: %s%s\n", s.Status, s.ID, s.Agent, s.Task, deps)
		}
		if len(e.Agents) > 0 {
			fmt.Fprintf(&b, "  -> %s", strings.Join(e.Agents, ", "))
		} else {
			fmt.Fprintf(&b, "  -> %s", QA)
		}
		return b.String()
	case EventSkills:
		var parts []string
		for _, s := range e.Skills {
			parts = append(parts, fmt.Sprintf("%q (%.2f)", s.Task, s.Score))
		}
		return fmt.Sprintf("%s %s: skills %s", e.Agent, e.Step, strings.Join(parts, ", "))
	case EventExecute:
		out := e.Text
		if e.Error != "" {
			out = "error: " + e.Error
		}
		if e.Tool == "" {
			return fmt.Sprintf("%s %s: attempt %d: %s\n  answer = %s", e.Agent, e.Step, e.Attempt, e.Thought, clip(out, 300))
		}
		return fmt.Sprintf("%s %s: attempt %d: %s\n  %s %s\n  = %s", e.Agent, e.Step, e.Attempt, e.Thought, e.Tool, mustJSON(e.Arguments), clip(out, 300))
	case EventReview:
		s := fmt.Sprintf("%s %s: reflection %s: %s", e.Agent, e.Step, e.Review.Verdict, e.Review.Critique)
		if e.Review.Feedback != "" {
			s += "\n  feedback: " + e.Review.Feedback
		}
		if e.Review.FixedOutput != "" {
			s += "\n  fixed: " + clip(e.Review.FixedOutput, 300)
		}
		return s
	case EventResult:
		if e.Result.OK {
			return fmt.Sprintf("%s %s: result after %d attempt(s): %s", e.Agent, e.Step, e.Result.Attempts, clip(e.Result.Output, 300))
		}
		return fmt.Sprintf("%s %s: gave up after %d attempt(s): %s", e.Agent, e.Step, e.Result.Attempts, e.Result.Error)
	case EventTeam:
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s: %s", e.Agent, e.Step, e.Text)
		for _, a := range e.Team.Agents {
			srv := a.Server
			if srv == "" {
				srv = "model only"
			}
			fmt.Fprintf(&b, "\n  agent %s (%s): %s", a.Name, srv, a.Role)
		}
		for _, s := range e.Team.Workflow {
			fmt.Fprintf(&b, "\n  %s %s: %s", s.ID, s.Agent, s.Task)
		}
		return b.String()
	case EventAnswer, EventDone:
		return fmt.Sprintf("%s: %s", e.Kind, e.Text)
	}
	return string(e.Kind)
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
