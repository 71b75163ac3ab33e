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
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		`plan: 4 steps to "Compare our pricing to competitors"`,
		"step 4 started: Synthesize (synthesizer)",
		"step 4 succeeded",
		"plan done: 4 steps ran",
		"  tool search_knowledge started",
		"  tool search_knowledge: text/plain content",
		"  tool search_knowledge done: 2 items",
		`Search Internal Docs: 2 passages for "Acme pricing plans", best first:`,
		"answer: (scripted) Acme Analytics charges per editor seat",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}
