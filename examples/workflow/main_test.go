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
		`data: {"type":"workflow.created","request_id":"req-1","seq":1,`,
		`"steps":4,"goal":"Compare our pricing to competitors"}`,
		`"step":4,"name":"Synthesize"}`,
		`"type":"workflow.complete"`,
		`Search Internal Docs: 2 passages for "Acme pricing plans", best first:`,
		`"type":"tool.content","request_id":"req-1"`,
		"answer: (scripted) Acme Analytics charges per editor seat",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}
