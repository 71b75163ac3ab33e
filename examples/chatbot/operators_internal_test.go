package chatbot

import (
	"context"
	"testing"
)

// TestOperatorToolsExist checks that every tool an operator declares (and
// list_operators advertises) is one the bot offers: coder runs its code
// with the bundled run_code.
func TestOperatorToolsExist(t *testing.T) {
	b, err := New(context.Background(), Config{Offline: true, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	sums, err := b.provider.ToolSummaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, s := range sums {
		have[s.Name] = true
	}
	coder := false
	for _, m := range b.ops.All() {
		for _, name := range m.MCPTools {
			if !have[name] {
				t.Errorf("operator %s declares tool %s, which does not exist", m.Name, name)
			}
		}
		if m.Name == "coder" {
			coder = true
			if len(m.MCPTools) != 1 || m.MCPTools[0] != "run_code" {
				t.Errorf("coder's tools %v, want [run_code]", m.MCPTools)
			}
		}
	}
	if !coder {
		t.Error("no coder operator")
	}
}
