package cognition_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/memory"
)

func Example() {
	ctx := context.Background()
	// A scripted model stands in for a provider; it answers the learner's
	// prompt with what it learned from the turn.
	model := llmtest.New(llmtest.JSON(cognition.Learning{
		Profile: cognition.ProfileUpdate{
			Expertise: cognition.Expert, Style: cognition.Concise,
			Interests: []string{"go", "postgres"},
		},
		Episodes: []cognition.EpisodeDraft{{
			Summary: "Tuned the connection pool of the user's Go service for PostgreSQL",
			Topics:  []string{"postgres", "pgx"}, Outcome: cognition.Success, Importance: 0.8,
		}},
	}))
	client, err := agent.New(agent.Config{Model: model})
	if err != nil {
		panic(err)
	}
	svc, err := cognition.New(cognition.Config{
		Learner: &cognition.LLMLearner{Model: client},
		Goals:   []string{"answer Go questions precisely"},
	})
	if err != nil {
		panic(err)
	}

	// After a turn: hand it over and return at once.
	err = svc.Observe(cognition.Interaction{
		UserID: "u1", ConversationID: "c1", Outcome: cognition.Success,
		Messages: []memory.Message{
			{Role: memory.RoleUser, Content: "My pgx pool starves under load; MaxConns is 4."},
			{Role: memory.RoleAssistant, Content: "Raise MaxConns to match your worker count..."},
		},
	})
	if err != nil {
		panic(err)
	}
	// On shutdown (here: to wait for the learning), drain the queue.
	if err := svc.Close(ctx); err != nil {
		panic(err)
	}

	// Before the next turn: a fast read, no model call.
	cc, err := svc.Context(ctx, "u1", "how big should my postgres pool be?")
	if err != nil {
		panic(err)
	}
	fmt.Println(cc.Render())
	// Output:
	// User profile:
	// - Expertise: expert
	// - Style preference: concise
	// - Interests: "go", "postgres"
	//
	// Relevant memories:
	// - "Tuned the connection pool of the user's Go service for PostgreSQL" (success)
	//
	// Assistant identity:
	// - Goals: answer Go questions precisely
	// - Success rate: 100% over 1 turns
}

// A memory.Assembler serves cognition to components that declare what
// they need as requirement strings.
func ExampleService_Source() {
	ctx := context.Background()
	learner := cognition.LearnerFunc(func(_ context.Context, in cognition.LearnInput) (cognition.Learning, error) {
		return cognition.Learning{
			Profile:  cognition.ProfileUpdate{Style: cognition.Concise},
			Episodes: []cognition.EpisodeDraft{{Summary: "Migrated the billing service to Go 1.26", Importance: 0.7}},
		}, nil
	})
	svc, err := cognition.New(cognition.Config{Learner: learner})
	if err != nil {
		panic(err)
	}
	defer svc.Close(ctx)
	err = svc.Learn(ctx, cognition.Interaction{UserID: "u1", Outcome: cognition.Success,
		Messages: []memory.Message{{Role: memory.RoleUser, Content: "Help me move billing to Go 1.26"}}})
	if err != nil {
		panic(err)
	}

	asm := memory.NewAssembler(memory.AssemblerConfig{})
	if err := asm.Register("cognition", svc.Source()); err != nil {
		panic(err)
	}
	turn := memory.NewTurn("c2", "is the billing service on the latest Go?")
	got, err := asm.Assemble(cognition.WithUser(ctx, "u1"), turn, "query", "cognition.profile", "cognition.memories(3)")
	if err != nil {
		panic(err)
	}
	fmt.Print(got)
	// Output:
	// ## query
	// is the billing service on the latest Go?
	//
	// ## cognition.profile
	// Style preference: concise
	//
	// ## cognition.memories(3)
	// "Migrated the billing service to Go 1.26" (success)
}

func ExampleMonitor() {
	m := cognition.NewMonitor(cognition.MonitorConfig{
		OnPattern: func(p cognition.Pattern) { fmt.Println("alert:", p) },
	})
	for range 3 {
		m.Record(cognition.Interaction{UserID: "u1", Outcome: cognition.Partial, Latency: 2 * time.Second,
			Tools: []cognition.ToolOutcome{{Name: "web_search", Err: "HTTP 503"}}})
	}
	snap := m.Snapshot()
	fmt.Printf("%d turns, web_search failed %d of %d calls\n", snap.Turns, snap.Tools["web_search"].Failures, snap.Tools["web_search"].Calls)
	// Output:
	// alert: tool_failing(web_search): failed 3 times in a row; last error: HTTP 503
	// alert: user_struggling(u1): the last 3 turns did not succeed
	// 3 turns, web_search failed 3 of 3 calls
}
