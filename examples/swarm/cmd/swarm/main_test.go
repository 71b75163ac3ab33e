package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/examples/swarm"
)

// mainEnv makes the test binary run main, as the command, for the tests
// that need processes of their own.
const mainEnv = "SWARM_CMD_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) != "" {
		main()
	}
	goleak.VerifyTestMain(m)
}

func offline(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_HOST", "SWARM_DSN", "SWARM_TOKEN"} {
		t.Setenv(k, "")
	}
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// command runs the command in a process of its own.
func command(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), mainEnv+"=1"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestRun prints the plan, each agent's work and reflection, and the
// answer with its sources, keeping the run in the data folder.
func TestRun(t *testing.T) {
	offline(t)
	dir := t.TempDir()
	code, out, errs := runCmd(t, "-data", dir, "Find what Acme's Team plan costs per editor, then calculate the yearly cost for 10 editors")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"model: offline (rule-based demo)",
		"data: " + dir,
		"thread: ",
		"  [pending] step_2 mcp_agent_calculator: calculate the yearly cost for 10 editors (use the value from step_1) after step_1",
		"mcp_agent_knowledge step_1: reflection FIXED",
		"status: complete after 3 supervisor turn(s), 2 agent result(s)",
		"- calculate 49 * 12 * 10: 49 * 12 * 10 = 5880",
		"Sources:\n[1] pricing (Team), used by step_1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(dir + "/checkpoints.db"); err != nil {
		t.Errorf("no checkpoints in the data folder: %v", err)
	}
}

// TestUsage: --help prints the flags and succeeds; no task, two modes, an
// unknown flag or a task over the limit are usage errors (exit 2).
func TestUsage(t *testing.T) {
	offline(t)
	code, out, _ := runCmd(t, "--help")
	if code != 0 || !strings.Contains(out, "usage: swarm") || !strings.Contains(out, "-resume THREAD") || !strings.Contains(out, "-dsn DSN") {
		t.Errorf("--help: exit %d:\n%s", code, out)
	}
	for _, args := range [][]string{
		{},
		{"   "},
		{"-no-such-flag", "task"},
		{"-resume", "x", "a task"},
		{strings.Repeat("word ", swarm.MaxTaskLen)},
		{"-serve", "0.0.0.0:0"},
	} {
		args = append([]string{"-data", t.TempDir()}, args...)
		if code, _, errs := runCmd(t, args...); code != 2 || !strings.Contains(errs, "usage: swarm") {
			t.Errorf("%q: exit %d, stderr %q; want 2 with the usage", args, code, errs)
		}
	}
}

// TestJSONAndResume: -json prints one event per line, the last with the
// outcome; -resume on the finished thread prints the same outcome.
func TestJSONAndResume(t *testing.T) {
	offline(t)
	dir := t.TempDir()
	code, out, errs := runCmd(t, "-data", dir, "-json", "What is 2 + 3?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last swarm.Event
	for _, l := range lines {
		if err := json.Unmarshal([]byte(l), &last); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
	}
	if last.Kind != swarm.EventDone || last.Outcome == nil || !strings.Contains(last.Outcome.Answer, "2 + 3 = 5") {
		t.Fatalf("last line = %+v", last)
	}
	code, out, errs = runCmd(t, "-data", dir, "-json", "-resume", last.Thread)
	var again swarm.Event
	if code != 0 || json.Unmarshal([]byte(strings.TrimSpace(out)), &again) != nil || again.Outcome.Answer != last.Outcome.Answer {
		t.Errorf("resume: exit %d, %q %s", code, out, errs)
	}
	if code, _, errs := runCmd(t, "-data", dir, "-resume", "no-such-thread"); code != 1 || !strings.Contains(errs, "no run on thread") {
		t.Errorf("unknown thread: exit %d, %q", code, errs)
	}
}

// TestSkillAcrossProcesses: a skill learned by one process (the calculator
// rejected "15% of 240" and learned to write N/100*M) is used by the next.
func TestSkillAcrossProcesses(t *testing.T) {
	offline(t)
	dir := t.TempDir()
	code, out, errs := command(t, nil, "-data", dir, "What is 15% of 240?")
	if code != 0 || !strings.Contains(out, "result after 2 attempt(s): 15/100*240 = 36") {
		t.Fatalf("first process: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = command(t, nil, "-data", dir, "What is 20% of 350?")
	if code != 0 {
		t.Fatalf("second process: exit %d: %s", code, errs)
	}
	for _, want := range []string{`mcp_agent_calculator step_1: skills "What is 15% of 240"`, "result after 1 attempt(s): 20/100*350 = 70"} {
		if !strings.Contains(out, want) {
			t.Errorf("second process lacks %q:\n%s", want, out)
		}
	}
}

// TestUnreachableModel: a provider that cannot be reached fails the run
// with a clear error, the thread to resume, and exit status 1.
func TestUnreachableModel(t *testing.T) {
	offline(t)
	code, out, errs := command(t, []string{"OPENAI_API_KEY=sk-test-unreachable", "OPENAI_BASE_URL=http://127.0.0.1:1/v1", "AGENTGRAPH_MODEL=openai:gpt-4o-mini"},
		"-data", t.TempDir(), "What is 2 + 3?")
	if code != 1 || !strings.Contains(errs, "the model failed in supervisor") || !strings.Contains(errs, "swarm -resume ") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant 1 with the model's failure and the thread to resume", code, out, errs)
	}
}
