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
	if err := run(context.Background(), &out, bosai.Config{Offline: true}, "How many customers are there per country, and what is 49 / 0?"); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"plan: [sql computation]",
		"[sql] result: 7 rows: country=Canada count=2",
		"[computation] error: run_code: runtime error",
		"answer: From sql:",
		"The computation agent failed",
		"data (7 rows): country | count",
		" 1 decision planner     planner chose sql, computation",
		"result   composer    composer wrote the answer",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}
