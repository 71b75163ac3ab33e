package bosai

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestArithmetic(t *testing.T) {
	for q, want := range map[string]string{
		"what is 12 * 49?":                 "12 * 49",
		"What is 15% of 240":               "(15 / 100.0 * 240)",
		"7 times 6 plus 1":                 "7 * 6 + 1",
		"compute (2 + 3) * 4 for the team": "(2 + 3) * 4",
		"What does the Team plan cost?":    "",
		"we have 12 editors":               "",
	} {
		if got := arithmetic(q); got != want {
			t.Errorf("arithmetic(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestHeuristic(t *testing.T) {
	for q, want := range map[string][]AgentName{
		"What does the Team plan cost per editor, and what is 12 * 49?": {AgentKnowledge, AgentComputation},
		"Any recent incidents? Is the status operational?":              {AgentAPI},
		"Hello there":                   {AgentKnowledge},
		"calculate the total of 2 + 2":  {AgentComputation},
		"pricing status and 2 + 2 cost": {AgentKnowledge, AgentAPI, AgentComputation}, // ties keep the default order
	} {
		if diff := cmp.Diff(want, heuristic(q)); diff != "" {
			t.Errorf("heuristic(%q) (-want +got):\n%s", q, diff)
		}
	}
}
