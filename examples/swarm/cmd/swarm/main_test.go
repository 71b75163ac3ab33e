package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun prints the plan, each agent's work and reflection, and the
// answer; the second task reuses the first's skill.
func TestRun(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_HOST"} {
		t.Setenv(k, "")
	}
	var out bytes.Buffer
	if err := run(context.Background(), &out, defaultTask, "What is 15% of 240?", "What is 20% of 350?"); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"model: offline (rule-based demo)",
		"  [pending] step_2 mcp_agent_calculator: calculate the yearly cost for 10 editors (use the value from step_1) after step_1",
		"mcp_agent_knowledge step_1: reflection FIXED",
		"  [pending] step_2 mcp_agent_calculator: calculate 49 * 12 * 10 after step_1",
		"status: complete after 3 supervisor turn(s), 2 agent result(s)",
		"- calculate 49 * 12 * 10: 49 * 12 * 10 = 5880",
		"mcp_agent_calculator step_1: reflection REJECTED",
		"mcp_agent_calculator step_1: result after 2 attempt(s): 15/100*240 = 36",
		`mcp_agent_calculator step_1: skills "What is 15% of 240"`,
		"mcp_agent_calculator step_1: result after 1 attempt(s): 20/100*350 = 70",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}
