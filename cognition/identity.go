package cognition

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// MaxGaps is how many knowledge gaps an [Identity] keeps, most recent
// first.
const MaxGaps = 20

// Identity is what the agent knows about itself: its goals, the subjects
// it has failed users on (knowledge gaps), and its running performance
// metrics. It is shared by all users of one agent, named by
// Config.Agent.
type Identity struct {
	// Agent names the agent the identity belongs to.
	Agent string `json:"agent"`
	// Goals are the agent's learning goals, from Config.Goals.
	Goals []string `json:"goals,omitempty"`
	// Values are the agent's core values, from Config.Values: principles
	// every answer keeps to, shown in every context.
	Values []string `json:"values,omitempty"`
	// Gaps are topics of turns that did not succeed, most recent first, at
	// most [MaxGaps], lower-case and unique.
	Gaps []string `json:"gaps,omitempty"`
	// Metrics are the agent's performance over every learned turn.
	Metrics Metrics `json:"metrics"`
	// Updated is when the identity last changed.
	Updated time.Time `json:"updated,omitzero"`
}

// Metrics are performance counters over learned turns.
type Metrics struct {
	// Turns counts learned turns.
	Turns int `json:"turns"`
	// Successes, Partials and Failures count turns by outcome; turns with
	// no outcome count in Turns only.
	Successes int `json:"successes"`
	Partials  int `json:"partials"`
	Failures  int `json:"failures"`
	// Latency sums the turns' latencies.
	Latency time.Duration `json:"latency"`
	// Tokens sums the turns' token usage.
	Tokens int `json:"tokens"`
	// ToolCalls and ToolFailures count tool calls and failed ones.
	ToolCalls    int `json:"tool_calls"`
	ToolFailures int `json:"tool_failures"`
}

// SuccessRate is Successes over the turns with an outcome, or 0 with none.
func (m Metrics) SuccessRate() float64 {
	n := m.Successes + m.Partials + m.Failures
	if n == 0 {
		return 0
	}
	return float64(m.Successes) / float64(n)
}

// MeanLatency is the mean latency per turn, or 0 with no turns.
func (m Metrics) MeanLatency() time.Duration {
	if m.Turns == 0 {
		return 0
	}
	return m.Latency / time.Duration(m.Turns)
}

// add counts one turn.
func (m *Metrics) add(in *Interaction) {
	m.Turns++
	switch in.Outcome {
	case Success:
		m.Successes++
	case Partial:
		m.Partials++
	case Failure:
		m.Failures++
	}
	m.Latency += in.Latency
	m.Tokens += in.Tokens
	for _, c := range in.Tools {
		m.ToolCalls++
		if c.Err != "" {
			m.ToolFailures++
		}
	}
}

// apply records a learned turn.
func (id *Identity) apply(in *Interaction, gaps []string, now time.Time) {
	id.Metrics.add(in)
	kept := make([]string, 0, len(gaps))
	for _, g := range gaps {
		if checkLearned(strings.ToLower(strings.TrimSpace(g)), MaxInterestLen) == "" {
			kept = append(kept, g)
		}
	}
	if len(kept) > 0 {
		id.Gaps = unionTopics(MaxGaps, kept, id.Gaps)
	}
	id.Updated = now
}

// Render formats the identity for a prompt under the heading "Assistant
// identity:": goals, core values, up to five knowledge gaps, and the success rate once
// some turn has an outcome. It returns "" when there is nothing to say.
func (id Identity) Render() string {
	m := id.Metrics
	rated := m.Successes + m.Partials + m.Failures
	if len(id.Goals) == 0 && len(id.Values) == 0 && len(id.Gaps) == 0 && rated == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Assistant identity:")
	if len(id.Goals) > 0 {
		fmt.Fprintf(&b, "\n- Goals: %s", strings.Join(id.Goals, "; "))
	}
	if len(id.Values) > 0 {
		fmt.Fprintf(&b, "\n- Core values: %s", strings.Join(id.Values, "; "))
	}
	if len(id.Gaps) > 0 { // learned from users' turns: quoted, as a profile's interests
		b.WriteString("\n- Known gaps: ")
		for i, g := range id.Gaps[:min(5, len(id.Gaps))] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", g)
		}
	}
	if rated > 0 {
		fmt.Fprintf(&b, "\n- Success rate: %.0f%% over %d turns", 100*m.SuccessRate(), rated)
	}
	return b.String()
}

func sameStrings(a, b []string) bool { return slices.Equal(a, b) }
