package offline_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/examples/supervisor"
)

var benchTools = []model.ToolDef{
	{Name: "search_knowledge", Description: "Search the knowledge base. Arguments: query."},
	{Name: "web_search", Description: "Search the web. Arguments: query."},
	{Name: "calculate", Description: "Evaluate arithmetic. Arguments: expression."},
}

// BenchmarkDecide is one supervisor decision through supervisor.Decide on the
// in-process offline model: prompt rendering, the rules, schema
// validation and decoding.
func BenchmarkDecide(b *testing.B) {
	benchDecide(b, agent.Config{Model: offline.New(offline.Config{})})
}

// BenchmarkDecideHTTP is the same decision through langchaingo's OpenAI
// client and the handler over loopback HTTP.
func BenchmarkDecideHTTP(b *testing.B) {
	m := offline.New(offline.Config{})
	srv := httptestServer(b, m)
	benchDecide(b, agent.Config{OpenAI: &provider.OpenAIConfig{BaseURL: srv + "/v1", APIKey: "offline"}, DefaultModel: "openai:" + m.Name()})
}

// BenchmarkDecideInProcess is the same decision through langchaingo's
// OpenAI client and the handler served by Model.Transport, without a
// socket.
func BenchmarkDecideInProcess(b *testing.B) {
	m := offline.New(offline.Config{})
	benchDecide(b, agent.Config{OpenAI: &provider.OpenAIConfig{BaseURL: "http://offline/v1", APIKey: "offline"},
		HTTPClient: &http.Client{Transport: m.Transport()}, DefaultModel: "openai:" + m.Name()})
}

// benchDecide makes one supervisor decision per iteration on the client
// of cfg.
func benchDecide(b *testing.B, cfg agent.Config) {
	b.Helper()
	c, err := agent.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	in := supervisor.DecideInput{Query: "How much does the Team plan cost?", Tools: benchTools, Iteration: 1, MaxIterations: 5}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := supervisor.Decide(ctx, c, in); err != nil {
			b.Fatal(err)
		}
	}
}
