package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// offline clears the provider settings so the demo model runs.
func offline(t *testing.T) {
	for _, k := range []string{provider.EnvOpenAIKey, provider.EnvAnthropicKey, provider.EnvOllamaHost, provider.EnvModel} {
		t.Setenv(k, "")
	}
}

func askTwice(t *testing.T, args ...string) {
	var out bytes.Buffer
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"[offline demo model", "It is warmer in Rome (24 °C) than in Paris (18 °C), by 6 degrees.", "[answered; this run: 125 tokens, thread: 125 tokens]"} {
		if !strings.Contains(got, want) {
			t.Fatalf("output lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	if err := run(context.Background(), append(args, "Which cities did I ask about?"), &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "Earlier in this conversation you asked about Paris and Rome.") || !strings.Contains(got, "thread: 165 tokens") {
		t.Fatalf("the thread did not remember:\n%s", got)
	}
}

func TestOfflineSQLite(t *testing.T) {
	offline(t)
	askTwice(t, "-db", t.TempDir()+"/agent.db")
}

func TestOfflinePostgres(t *testing.T) {
	offline(t)
	_, schema := postgrestest.Schema(t, "exagent_")
	askTwice(t, "-postgres", postgrestest.DSN(), "-schema", schema)
}

// With OPENAI_API_KEY set the example uses the provider: here an OpenAI
// wire server scripted to call get_weather and answer.
func TestWithProvider(t *testing.T) {
	offline(t)
	script := llmtest.New(
		llmtest.Reply{ToolCalls: []model.ToolCall{llmtest.ToolCall("c1", "get_weather", `{"city":"Oslo"}`)}},
		llmtest.Reply{Text: "Oslo: 9 degrees."},
	)
	srv := llmtest.NewOpenAIServer(script)
	defer srv.Close()
	t.Setenv(provider.EnvOpenAIKey, "k")
	t.Setenv(provider.EnvOpenAIBaseURL, srv.URL+"/v1")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-db", t.TempDir() + "/a.db", "Weather in Oslo?"}, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); strings.Contains(got, "demo") || !strings.Contains(got, "Oslo: 9 degrees.") {
		t.Fatalf("output:\n%s", got)
	}
	calls := script.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	var result string
	for _, m := range calls[1].Request.Messages {
		for _, p := range m.Parts {
			if p.ToolResult != nil {
				result = p.ToolResult.Text()
			}
		}
	}
	if result != "9 °C in Oslo" {
		t.Fatalf("tool result sent %q", result)
	}
}
