package cortexr

import "time"

// Metrics are a run's performance metrics (the seed's §26C): time per
// step attempt in perception, decision and action, and per tool its calls,
// failures and latency. Answer.Metrics carries them.
type Metrics struct {
	// Attempts are the step attempts in order.
	Attempts []AttemptMetrics
	// Tools are the tools called, by name.
	Tools map[string]ToolMetrics
	// Model is the time spent in model calls (perception and decision);
	// Action the time plans ran, tool calls included.
	Model, Action time.Duration
}

// AttemptMetrics times one attempt of one step.
type AttemptMetrics struct {
	Step, Attempt                int
	Perception, Decision, Action time.Duration
	// ToolCalls is how many tool calls the attempt's plan made.
	ToolCalls int
	// Failed is set when the attempt cost a lifeline or ended the run
	// failed.
	Failed bool
}

// ToolMetrics sums one tool's calls.
type ToolMetrics struct {
	Calls, Failures int
	Total, Max      time.Duration
}

func (m *Metrics) attempt(e Event) *AttemptMetrics {
	if n := len(m.Attempts); n > 0 && m.Attempts[n-1].Step == e.Step && m.Attempts[n-1].Attempt == e.Attempt {
		return &m.Attempts[n-1]
	}
	m.Attempts = append(m.Attempts, AttemptMetrics{Step: e.Step, Attempt: e.Attempt})
	return &m.Attempts[len(m.Attempts)-1]
}

func (m *Metrics) add(e Event) {
	switch e.Kind {
	case EventPerception:
		m.attempt(e).Perception = e.Duration
		m.Model += e.Duration
	case EventPlan:
		m.attempt(e).Decision = e.Duration
		m.Model += e.Duration
	case EventToolCall:
		m.attempt(e).ToolCalls++
		if m.Tools == nil {
			m.Tools = map[string]ToolMetrics{}
		}
		t := m.Tools[e.Tool.Name]
		t.Calls++
		if e.Tool.Error != "" {
			t.Failures++
		}
		t.Total += e.Tool.Duration
		t.Max = max(t.Max, e.Tool.Duration)
		m.Tools[e.Tool.Name] = t
	case EventAction:
		a := m.attempt(e)
		a.Action, a.Failed = e.Duration, e.Error != ""
		m.Action += e.Duration
	}
}
