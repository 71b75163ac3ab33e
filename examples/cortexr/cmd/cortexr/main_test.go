package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_HOST"} {
		t.Setenv(k, "")
	}
	var out bytes.Buffer
	if err := run(context.Background(), &out, defaultQuery, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	s := out.String()
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
