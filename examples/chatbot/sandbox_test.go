package chatbot_test

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/examples/internal/sandbox/sandboxtest"
	"github.com/agentgraph/agentgraph/examples/supervisor"
)

// TestRunCodeHostilePrograms asks run_code, over the HTTP API, to run each
// program that once brought down the chatbot: the call fails with a tool
// error naming the limit, the bot answers the turn, and its heap is back
// where it was.
func TestRunCodeHostilePrograms(t *testing.T) {
	model := llmtest.New().Default(llmtest.JSON(supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "the program ran or failed", Response: "Done."}))
	_, srv := scriptedServer(t, model)
	runCode := func(code string) turn {
		model.Add(llmtest.JSON(supervisor.Decision{Action: supervisor.ActionCallTool, Reasoning: "compute it", Tool: "run_code",
			Arguments: map[string]any{"code": code, "timeout_ms": 3000}}))
		tr, err := chatErr(srv, "", "Run my program.")
		if err != nil {
			t.Fatal(err)
		}
		if diff := tr.tools(); len(diff) != 1 || diff[0] != "run_code" {
			t.Fatalf("tools run %v, want run_code", diff)
		}
		return tr
	}
	toolError := func(tr turn) string {
		for _, ev := range tr.events {
			if p, ok := ev.Payload.(chatevent.ToolError); ok && p.Tool == "run_code" {
				return p.Error
			}
		}
		return ""
	}

	// A first program starts the sandbox's worker, so the baseline has it.
	if tr := runCode("result = 6 * 7"); toolError(tr) != "" {
		t.Fatalf("a plain program failed: %s", toolError(tr))
	}
	before := sandboxtest.HeapAlloc()
	for _, prog := range sandboxtest.Hostile {
		t.Run(prog.Name, func(t *testing.T) {
			tr := runCode(prog.Src)
			msg := toolError(tr)
			named := false
			for _, k := range prog.Kinds {
				named = named || strings.Contains(msg, k.String()+" error")
			}
			if !named {
				t.Errorf("run_code error %q names none of %v", msg, prog.Kinds)
			}
			if !chatevent.Terminal(tr.last()) || tr.answer() == "" {
				t.Errorf("the turn ended with %s and answer %q", tr.last(), tr.answer())
			}
		})
	}
	if after := sandboxtest.HeapAlloc(); after > before+32<<20 {
		t.Errorf("heap grew from %d to %d bytes", before, after)
	}
	if tr := runCode("result = 6 * 7"); toolError(tr) != "" {
		t.Errorf("a plain program after the hostile ones failed: %s", toolError(tr))
	}
}
