package bosai

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
)

// TestAgentTaskValidates: an agent task whose request Run would refuse
// (an empty question, one over MaxQuestionLen), made by an update routing
// to the task node rather than by the plan, fails with ErrInvalidRequest
// before its agent runs.
func TestAgentTaskValidates(t *testing.T) {
	b, err := New(Config{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	for i, req := range []Request{{Question: " "}, {Question: strings.Repeat("x", MaxQuestionLen+1)}} {
		th := b.Graph().Thread("agent-task-" + string(rune('a'+i)))
		send, err := b.Graph().SendTo("agent", func(p any) error {
			*p.(*task) = task{Agent: AgentComputation, Request: req}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := th.Update(t.Context(), graph.Update[State]{}.Send(send)); err != nil {
			t.Fatal(err)
		}
		if _, err := th.Invoke(t.Context(), State{}); !errors.Is(err, ErrInvalidRequest) && !errors.Is(err, ErrEmptyQuestion) {
			t.Errorf("request %d: run err = %v; want ErrInvalidRequest or ErrEmptyQuestion", i, err)
		}
	}
}
