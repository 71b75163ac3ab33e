package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/examples/bosai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, bosai.Config{Offline: true}, bosai.Request{Question: "How many customers are there per country, and what is 49 / 0?", Trace: true}); err != nil {
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

func TestCLI(t *testing.T) {
	var out, errOut bytes.Buffer
	// An empty question is a usage error.
	if err := cli(t.Context(), []string{"-offline"}, &out, &errOut); !errors.Is(err, errUsage) || !strings.Contains(errOut.String(), "question is empty") {
		t.Fatalf("empty question: %v %q", err, errOut.String())
	}
	errOut.Reset()
	if err := cli(t.Context(), []string{"-offline", "-prefer", "knowledge", "hi"}, &out, &errOut); !errors.Is(err, errUsage) || !strings.Contains(errOut.String(), "the agents are api_docs, sql, computation") {
		t.Fatalf("unknown agent: %v %q", err, errOut.String())
	}
	// -json, -disable, -context.
	out.Reset()
	err := cli(t.Context(), []string{"-offline", "-json", "-disable", "api_docs,computation", "-context", "tenant=acme", "How many customers are there?"}, &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	var resp bosai.Response
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil || resp.Data == nil || len(resp.Results) != 1 || resp.Results[0].Agent != bosai.AgentSQL {
		t.Fatalf("%v %s", err, out.String())
	}
	// A run whose agents all fail exits non-zero.
	out.Reset()
	err = cli(t.Context(), []string{"-offline", "-json", "-disable", "sql,api_docs", "What is 1 / 0?"}, &out, &errOut)
	if !errors.Is(err, errFailed) {
		t.Fatalf("failed run: %v\n%s", err, out.String())
	}
}
