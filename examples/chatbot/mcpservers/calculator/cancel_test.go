package calculator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/clienttest"
)

// A client that gives up on a call stops the program on the server, long
// before the server's own limits would.
func TestClientCancellationStopsProgram(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	s, err := calculator.New(calculator.Config{MaxSteps: 1 << 62, Timeout: time.Minute, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	c := clienttest.InProcess(t, s, clienttest.Options{})
	callCtx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	// In-process the cancelled handler's result may still come back; over
	// a wire the client returns the context error. Either way the call ends.
	res, _, err := c.Call(callCtx, "run_code", map[string]any{"code": "while True:\n    pass\n"}, false)
	if err == nil && (!res.IsError || !strings.Contains(clienttest.Text(res), "cancelled")) {
		t.Fatalf("call result %q, want a cancellation", clienttest.Text(res))
	}
	deadline := time.After(5 * time.Second)
	for logs.FilterMessage("run_code").Len() == 0 {
		select {
		case <-deadline:
			t.Fatal("the program was still running 5s after the client cancelled")
		case <-time.After(5 * time.Millisecond):
		}
	}
	entry := logs.FilterMessage("run_code").All()[0]
	if errText, _ := entry.ContextMap()["error"].(string); !strings.Contains(errText, "cancelled error") {
		t.Errorf("run_code logged %v, want a cancelled error", entry.ContextMap())
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("program stopped %v after the call began", elapsed)
	}
}
