// Command quickstart builds a small typed agent-style graph, streams its
// run (each node's update and the progress it reports) and prints the graph
// as a Mermaid diagram.
//
//	go run ./examples/quickstart
//
// The graph: plan splits a question into sub-questions, one research task
// per sub-question runs in parallel (a dynamic fan-out), write drafts an
// answer from the notes, and review either accepts the draft or sends it
// back to write, at most twice.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/agentgraph/agentgraph/graph"
)

// State is the whole state of a run. Each field that nodes write has a
// handle below that says how writes merge.
type State struct {
	Question string
	Notes    []string // appended to by every research task
	Draft    string   // replaced by each new draft
	Drafts   int      // summed: how many drafts were written
	Approved bool
}

// The field handles: each names a field of State and the reducer that
// merges the updates nodes write to it.
var (
	Notes    = graph.Append(func(s *State) *[]string { return &s.Notes })
	Draft    = graph.Replace(func(s *State) *string { return &s.Draft })
	Drafts   = graph.Sum(func(s *State) *int { return &s.Drafts })
	Approved = graph.Replace(func(s *State) *bool { return &s.Approved })
)

func build() (*graph.Compiled[State], error) {
	g := graph.New[State]()

	// research runs once per sub-question, with the sub-question as input.
	research := graph.AddTask(g, "research", func(ctx context.Context, topic string) (graph.Update[State], error) {
		if err := graph.Emit(ctx, "looking up "+topic); err != nil {
			return graph.Update[State]{}, err
		}
		return Notes.Set([]string{topic + ": found"}), nil
	})

	g.AddNode("plan", func(ctx context.Context, s State) (graph.Update[State], error) {
		return graph.Update[State]{}, nil
	})
	g.AddConditionalEdges("plan", func(ctx context.Context, s State) (graph.Route, error) {
		var tasks []graph.Send
		for _, topic := range strings.Split(s.Question, " and ") {
			tasks = append(tasks, research.Send(topic))
		}
		return graph.Dispatch(tasks...), nil
	}, "research")

	g.AddNode("write", func(ctx context.Context, s State) (graph.Update[State], error) {
		draft := fmt.Sprintf("draft %d from %d notes", s.Drafts+1, len(s.Notes))
		return graph.Updates(Draft.Set(draft), Drafts.Set(1)), nil
	})
	g.AddNode("review", func(ctx context.Context, s State) (graph.Update[State], error) {
		return Approved.Set(s.Drafts >= 2), nil
	})
	g.AddConditionalEdges("review", func(ctx context.Context, s State) (graph.Route, error) {
		if s.Approved {
			return graph.To(graph.END), nil
		}
		return graph.To("write"), nil
	}, "write", graph.END)

	g.AddEdge(graph.START, "plan")
	g.AddEdge("research", "write")
	g.AddEdge("write", "review")
	return g.Compile()
}

func main() {
	app, err := build()
	if err != nil {
		log.Fatal(err)
	}
	in := State{Question: "typed state and reducers and super-steps"}
	var final State
	modes := graph.WithModes(graph.StreamUpdates, graph.StreamCustom, graph.StreamValues)
	for ev, err := range app.Stream(context.Background(), in, modes) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Mode {
		case graph.StreamCustom:
			fmt.Printf("step %d  %-8s  says %v\n", ev.Step, ev.Node, ev.Payload)
		case graph.StreamUpdates:
			fmt.Printf("step %d  %-8s  wrote %v\n", ev.Step, ev.Node, ev.Update)
		case graph.StreamValues:
			final = ev.State
		}
	}
	fmt.Printf("\nfinal: %q after %d drafts, approved=%v\n\n", final.Draft, final.Drafts, final.Approved)
	fmt.Fprint(os.Stdout, app.Mermaid())
}
