package offline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/examples/supervisor/supervisortest"
)

// FuzzSupervisor checks that any question in the supervisor prompt gets a
// decision that passes the same checks supervisor.Decide applies.
func FuzzSupervisor(f *testing.F) {
	for _, q := range []string{"hi", "What is 3 + (4", "Compare our pricing to competitors", "((((1))))+2", "update it", "", "1,000,000 x 3 % of 9"} {
		f.Add(q)
	}
	m := offline.New(offline.Config{})
	tools := []model.ToolDef{{Name: "search_knowledge"}, {Name: "web_search"}, {Name: "calculate"}, {Name: "query_rewriter"}, {Name: "synthesizer"}}
	f.Fuzz(func(t *testing.T, q string) {
		q = strings.ReplaceAll(q, "\n", " ")
		prompt, err := supervisortest.Prompt(supervisortest.Request{Step: supervisortest.Decide, Query: q, Tools: tools, Iteration: 1, MaxIterations: 5})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{model.User(prompt)}})
		if err != nil {
			t.Fatal(err)
		}
		var d supervisor.Decision
		if err := json.Unmarshal([]byte(resp.Text()), &d); err != nil {
			t.Fatalf("reply %q: %v", resp.Text(), err)
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("decision for %q invalid: %v", q, err)
		}
	})
}
