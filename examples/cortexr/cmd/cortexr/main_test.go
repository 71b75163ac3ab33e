package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const india = "Find the ASCII values of characters in INDIA and then return sum of exponentials of those values"

func offline(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_HOST"} {
		t.Setenv(k, "")
	}
}

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRun(t *testing.T) {
	offline(t)
	code, s, _ := runCLI(t, "", "-memory", t.TempDir(), india)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, s)
	}
	for _, want := range []string{
		`perception: intent "compute a value with math and string tools", servers [math]`,
		"v1 = strings_to_chars_to_int(string=\"INDIA\")",
		"tool strings_to_chars_to_int(map[string:INDIA]) = [73 78 68 73 65]",
		"answered after 1 step(s): 7.599822246093079e+33",
		"memory: ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

func TestExitCodes(t *testing.T) {
	offline(t)
	if code, _, e := runCLI(t, "", "-memory", "none", "  "); code != exitUsage || !strings.Contains(e, "the query is empty") {
		t.Errorf("empty query: exit %d, %q; want %d", code, e, exitUsage)
	}
	if code, _, _ := runCLI(t, "", "-strategy", "bold", "q"); code != exitUsage {
		t.Errorf("bad strategy: exit %d", code)
	}
	if code, s, _ := runCLI(t, "", "-memory", "none", "Compute the factorial of 200"); code != exitFailed || !strings.Contains(s, "failed after 1 step(s)") {
		t.Errorf("failed run: exit %d:\n%s", code, s)
	}
	if code, s, _ := runCLI(t, "", "-memory", "none", "-profile", "../../config/profiles.yaml", "Summarize this webpage: https://example.com"); code != exitOK || !strings.Contains(s, "Example Domain") {
		t.Errorf("webpage with the profile: exit %d:\n%s", code, s)
	}
}

// The interactive mode keeps one session until "new".
func TestInteractive(t *testing.T) {
	offline(t)
	in := "Compute the factorial of 5\nWhat brew ratio does a classic espresso use?\nnew\nCompute the factorial of 4\nexit\n"
	code, s, _ := runCLI(t, in, "-memory", t.TempDir())
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, s)
	}
	sessions := regexp.MustCompile(`(?m)(?:^|> )(?:new )?session (\S+)`).FindAllStringSubmatch(s, -1)
	files := regexp.MustCompile(`(?m)^memory: (\S+)`).FindAllStringSubmatch(s, -1)
	if len(sessions) != 2 || sessions[0][1] == sessions[1][1] || len(files) != 3 || files[0][1] != files[1][1] || files[1][1] == files[2][1] {
		t.Fatalf("sessions %v, memory files %v; want two queries in the first session and one in a new one:\n%s", sessions, files, s)
	}
	for _, want := range []string{"answered after 1 step(s): 120", "[Source: espresso_guide.txt", "answered after 1 step(s): 24"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

// An unreachable model fails the run the same way every time: each attempt
// costs a lifeline, the run ends failed and the command exits 1.
func TestModelUnreachable(t *testing.T) {
	offline(t)
	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:1")
	code, s, e := runCLI(t, "", "-memory", "none", india)
	if code != exitFailed || !strings.Contains(s, "failed after 1 step(s)") {
		t.Fatalf("exit %d:\nstdout %s\nstderr %s", code, s, e)
	}
}
