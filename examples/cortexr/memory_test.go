package cortexr_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/examples/cortexr"
)

func TestMemoryReopenAndFallback(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	yes, no := true, false
	old, err := cortexr.OpenMemory(dir, "2026/01/01/session-100-aaaaaa")
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Add(
		cortexr.MemoryItem{Type: cortexr.ItemToolOutput, ToolName: "add", Success: &yes},
		cortexr.MemoryItem{Type: cortexr.ItemToolOutput, ToolName: "divide", Success: &no},
	); err != nil {
		t.Fatal(err)
	}
	s1, err := cortexr.OpenMemory(dir, cortexr.NewSessionID(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.Add(cortexr.MemoryItem{Type: cortexr.ItemToolOutput, ToolName: "factorial", Success: &yes}); err != nil {
		t.Fatal(err)
	}
	// This session's successes first, then the earlier session's; failures never.
	if diff := cmp.Diff([]string{"factorial", "add"}, s1.RecentSuccesses(0)); diff != "" {
		t.Errorf("RecentSuccesses (-want +got):\n%s", diff)
	}
	// Reopening a session continues its memory.
	again, err := cortexr.OpenMemory(dir, s1.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Items()) != 1 || again.Items()[0].ToolName != "factorial" {
		t.Errorf("reopened items %+v", again.Items())
	}
	if _, err := cortexr.OpenMemory(dir, "../escape"); err == nil {
		t.Error("a session id with .. was accepted")
	}
}
