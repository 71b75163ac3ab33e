package swarm_test

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/examples/swarm"
)

// BenchmarkRun measures one offline run of the two-agent task: three
// supervisor turns, two agents, two reflections, the MCP calls in process
// and the checkpoints in memory. The offline model costs next to nothing,
// so this is the swarm's own overhead around the model.
func BenchmarkRun(b *testing.B) {
	s, err := swarm.New(swarm.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Do(context.Background(), teamTask); err != nil {
			b.Fatal(err)
		}
	}
}
