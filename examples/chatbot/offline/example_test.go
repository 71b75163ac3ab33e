package offline_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/examples/supervisor"
)

// The offline model behind langchaingo's real OpenAI client: the chatbot's
// no-API-key mode.
func ExampleModel_Handler() {
	demo := offline.New(offline.Config{})
	srv := httptest.NewServer(demo.Handler())
	defer srv.Close()

	reg := agent.DefaultRegistry()
	// Every alias the chatbot uses resolves to the offline model.
	if err := agent.RegisterAliases(reg, "haiku=openai:offline-demo,sonnet=openai:offline-demo,opus=openai:offline-demo"); err != nil {
		log.Fatal(err)
	}
	client, err := agent.New(agent.Config{
		Registry: reg,
		OpenAI:   &provider.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "offline"},
	})
	if err != nil {
		log.Fatal(err)
	}
	tools := []model.ToolDef{
		{Name: "search_knowledge", Description: "Search the Acme Analytics knowledge base. Arguments: query."},
		{Name: "calculate", Description: "Evaluate an arithmetic expression. Arguments: expression."},
	}
	for _, q := range []string{"Hello!", "What is 12 * 7?", "What is your refund policy?", "Fix it"} {
		dres, err := supervisor.Decide(context.Background(), client, supervisor.DecideInput{Query: q, Tools: tools})
		d := dres.Value
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-28s %-9s %s %v\n", q, d.Action, d.Tool, d.Arguments)
	}
	// Output:
	// Hello!                       ANSWER     map[]
	// What is 12 * 7?              CALL_TOOL calculate map[expression:12 * 7]
	// What is your refund policy?  CALL_TOOL search_knowledge map[query:refund policy]
	// Fix it                       CLARIFY    map[]
}

// Used directly as a model.Model, with no HTTP.
func ExampleNew() {
	client, err := agent.New(agent.Config{Model: offline.New(offline.Config{})})
	if err != nil {
		log.Fatal(err)
	}
	rres, err := supervisor.Reflect(context.Background(), client, supervisor.ReflectInput{
		Query:        "How much does the Team plan cost?",
		Observations: []supervisor.Observation{{Source: "search_knowledge", Content: "Team costs $49 per editor per month."}},
	})
	r := rres.Value
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Assessment)
	// Output:
	// satisfied
}
