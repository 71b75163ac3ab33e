package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/examples/bosai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, bosai.Config{Offline: true}, "What does the Team plan cost per editor, and what is 49 / 0?"); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"plan: [knowledge computation]",
		"[knowledge] result: 3 passages",
		"[computation] error: run_code: runtime error",
		"answer: From knowledge:",
		"The computation agent failed",
		"data (3 rows): rank | document | title | section | score | text",
		" 1 decision planner     planner chose knowledge, computation",
		"10 result   composer    composer wrote the answer",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}
