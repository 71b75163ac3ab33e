package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/provider"
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

// TestServeRefusesOpenNetwork: -serve beyond loopback without tokens, or
// with a short token, is a usage error that says how to fix it; on
// loopback the API serves until the context ends.
func TestServeRefusesOpenNetwork(t *testing.T) {
	var out, errOut bytes.Buffer
	t.Setenv("BOSAI_TOKENS", "")
	if err := cli(t.Context(), []string{"-offline", "-serve", ":0"}, &out, &errOut); !errors.Is(err, errUsage) || !strings.Contains(errOut.String(), "BOSAI_TOKENS") {
		t.Errorf("-serve :0 without tokens: %v %q, want a usage error naming BOSAI_TOKENS", err, errOut.String())
	}
	errOut.Reset()
	t.Setenv("BOSAI_TOKENS", "alice=short")
	if err := cli(t.Context(), []string{"-offline", "-serve", ":0"}, &out, &errOut); !errors.Is(err, errUsage) || !strings.Contains(errOut.String(), "HTTPConfig.Tokens") {
		t.Errorf("a short token: %v %q, want a usage error naming HTTPConfig.Tokens", err, errOut.String())
	}
	errOut.Reset()
	t.Setenv("BOSAI_TOKENS", "")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- cli(ctx, []string{"-offline", "-serve", "127.0.0.1:0"}, &out, &errOut) }()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("-serve 127.0.0.1:0: %v %q", err, errOut.String())
	}
}

// With only OPENAI_API_KEY (and OPENAI_BASE_URL, to reach the test server)
// set, the CLI runs on OpenAI's default model through provider.FromEnv:
// here an OpenAI wire-protocol server (llmtest) that answers Bos-AI's
// prompts.
func TestOnlyOpenAIKey(t *testing.T) {
	m := llmtest.New().
		On(bosai.MarkerPlanner, llmtest.JSON(map[string]any{"agents": []string{"computation"}, "rationale": "the question is arithmetic", "confidence": 0.9})).
		On(bosai.MarkerComputation, llmtest.JSON(map[string]any{"code": "result = 1200 - 350", "explanation": "subtracts 350 from 1200"})).
		On(bosai.MarkerCompose, llmtest.Text("1200 - 350 is 850."))
	srv := llmtest.NewOpenAIServer(m)
	defer srv.Close()
	for _, k := range []string{provider.EnvAnthropicKey, provider.EnvAnthropicURL, provider.EnvOllamaHost, provider.EnvModel, provider.EnvOpenAIOrg, agent.EnvModelAliases} {
		t.Setenv(k, "")
	}
	t.Setenv(provider.EnvOpenAIKey, "sk-test")
	t.Setenv(provider.EnvOpenAIBaseURL, srv.URL+"/v1")

	var out, errOut bytes.Buffer
	if err := cli(t.Context(), []string{"-json", "What is 1200 - 350?"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	var resp bosai.Response
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Answer != "1200 - 350 is 850." || len(resp.Results) != 1 || resp.Results[0].Agent != bosai.AgentComputation || !strings.Contains(resp.Results[0].Answer, "850") {
		t.Fatalf("response %+v", resp)
	}
	calls := m.Calls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want planner, computation and composer", len(calls))
	}
	for _, c := range calls {
		if c.Request == nil || c.Request.Model != provider.DefaultOpenAIModel {
			t.Errorf("a call reached the server for model %v, want %s (OpenAI's default)", c.Request, provider.DefaultOpenAIModel)
		}
	}
}
