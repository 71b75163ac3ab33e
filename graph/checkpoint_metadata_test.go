package graph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// WithCheckpointMetadata labels every checkpoint the run saves, with each
// durability, beside its source (which a label named source does not
// replace); a later run without labels saves checkpoints without them.
func TestWithCheckpointMetadata(t *testing.T) {
	for _, d := range []graph.Durability{graph.DurabilityStep, graph.DurabilityAsync, graph.DurabilityExit} {
		t.Run(fmt.Sprint(d), func(t *testing.T) {
			saver := checkpoint.NewMemory()
			c := echoGraph(t, saver)
			th := c.Thread("labels")
			labels := map[string]string{"run_id": "r1", "user": "ada", graph.MetaSource: "mine"}
			if _, err := th.Invoke(context.Background(), chat{Messages: []string{"hi"}}, graph.WithDurability(d), graph.WithCheckpointMetadata(labels)); err != nil {
				t.Fatal(err)
			}
			var first []map[string]string
			for snap, err := range th.History(context.Background(), checkpoint.ListOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				first = append(first, snap.Metadata)
			}
			if len(first) == 0 {
				t.Fatal("no checkpoint saved")
			}
			for _, md := range first {
				if md["run_id"] != "r1" || md["user"] != "ada" || md[graph.MetaSource] == "mine" || md[graph.MetaSource] == "" {
					t.Errorf("metadata %v; want the run's labels and the checkpoint's own source", md)
				}
			}
			if _, err := th.Invoke(context.Background(), chat{Messages: []string{"again"}}, graph.WithDurability(d)); err != nil {
				t.Fatal(err)
			}
			snap, err := th.State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := snap.Metadata["run_id"]; ok || len(snap.Metadata) != 1 {
				t.Errorf("metadata of a run without labels: %v; want its source only", snap.Metadata)
			}
		})
	}
}
