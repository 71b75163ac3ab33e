package bosai_test

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/examples/bosai"
)

// BenchmarkAsk measures one offline request with two agents end to end:
// planner, two agents over in-process MCP (a SQL query on the sample database, a Starlark run),
// composer, checkpoints in memory.
func BenchmarkAsk(b *testing.B) {
	bot, err := bosai.New(bosai.Config{Offline: true})
	if err != nil {
		b.Fatal(err)
	}
	defer bot.Close(context.Background())
	ctx := context.Background()
	req := bosai.Request{Question: "How many customers are there per country, and what is 12 * 49?"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bot.Ask(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
