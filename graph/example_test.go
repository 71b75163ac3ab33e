package graph_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/graph"
)

// The state of the examples: a plain struct. Each field that nodes write
// gets a typed handle that holds its reducer.
type Doc struct {
	Topic   string
	Notes   []string
	Words   int
	Verdict string
}

var (
	Topic   = graph.Replace(func(d *Doc) *string { return &d.Topic })
	Notes   = graph.Append(func(d *Doc) *[]string { return &d.Notes })
	Words   = graph.Sum(func(d *Doc) *int { return &d.Words })
	Verdict = graph.Replace(func(d *Doc) *string { return &d.Verdict })
)

// A chain of nodes. Each node returns only the fields it writes: Notes
// appends, Words adds up, and Topic is left alone.
func Example_chain() {
	note := func(text string) graph.NodeFunc[Doc] {
		return func(ctx context.Context, d Doc) (graph.Update[Doc], error) {
			return graph.Updates(Notes.Set([]string{text}), Words.Set(len(strings.Fields(text)))), nil
		}
	}
	g := graph.New[Doc]()
	g.AddNode("outline", note("outline the "+"argument"))
	g.AddNode("draft", note("write the draft"))
	g.AddNode("edit", note("edit"))
	g.AddEdge(graph.START, "outline").AddEdge("outline", "draft").AddEdge("draft", "edit").AddEdge("edit", graph.END)
	app, err := g.Compile()
	if err != nil {
		log.Fatal(err)
	}
	out, err := app.Invoke(context.Background(), Doc{Topic: "graphs"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %q, %d words\n", out.Topic, out.Notes, out.Words)
	// Output: graphs: ["outline the argument" "write the draft" "edit"], 7 words
}

// A conditional edge: the router reads the state after the step and picks
// the next node among the targets declared for it.
func Example_conditionalRouting() {
	g := graph.New[Doc]()
	g.AddNode("review", func(ctx context.Context, d Doc) (graph.Update[Doc], error) {
		return Words.Set(len(strings.Fields(d.Topic))), nil
	})
	g.AddNode("accept", func(ctx context.Context, d Doc) (graph.Update[Doc], error) {
		return Verdict.Set("accepted"), nil
	})
	g.AddNode("reject", func(ctx context.Context, d Doc) (graph.Update[Doc], error) {
		return Verdict.Set("too long"), nil
	})
	g.AddEdge(graph.START, "review")
	g.AddConditionalEdges("review", func(ctx context.Context, d Doc) (graph.Route, error) {
		if d.Words <= 3 {
			return graph.To("accept"), nil
		}
		return graph.To("reject"), nil
	}, "accept", "reject")
	g.AddEdge("accept", graph.END).AddEdge("reject", graph.END)
	app, err := g.Compile()
	if err != nil {
		log.Fatal(err)
	}
	for _, topic := range []string{"typed graphs", "a very long and winding title"} {
		out, err := app.Invoke(context.Background(), Doc{Topic: topic})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%q: %s\n", topic, out.Verdict)
	}
	// Output:
	// "typed graphs": accepted
	// "a very long and winding title": too long
}

// Parallel fan-out: the three researchers run in the same super-step, and
// their appends merge in the order the nodes were added, whichever finishes
// first. summarize has three incoming edges and runs once, after all of them.
func Example_parallelFanOut() {
	g := graph.New[Doc]()
	g.AddNode("plan", func(ctx context.Context, d Doc) (graph.Update[Doc], error) {
		return graph.Update[Doc]{}, nil
	})
	g.AddEdge(graph.START, "plan")
	for _, source := range []string{"papers", "code", "issues"} {
		g.AddNode(source, func(ctx context.Context, d Doc) (graph.Update[Doc], error) {
			return Notes.Set([]string{"read the " + source}), nil
		})
		g.AddEdge("plan", source).AddEdge(source, "summarize")
	}
	g.AddNode("summarize", func(ctx context.Context, d Doc) (graph.Update[Doc], error) {
		return Verdict.Set(fmt.Sprintf("%d sources", len(d.Notes))), nil
	})
	g.AddEdge("summarize", graph.END)
	app, err := g.Compile()
	if err != nil {
		log.Fatal(err)
	}
	out, err := app.Invoke(context.Background(), Doc{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Notes, out.Verdict)
	// Output: [read the papers read the code read the issues] 3 sources
}

// Map-reduce with dynamic tasks: a router sends one task per paragraph to
// a task node that takes a string, not the state. The tasks run in
// parallel and their updates merge through the reducers in send order.
func Example_mapReduce() {
	g := graph.New[Doc]()
	count := graph.AddTask(g, "count", func(ctx context.Context, paragraph string) (graph.Update[Doc], error) {
		n := len(strings.Fields(paragraph))
		return graph.Updates(Words.Set(n), Notes.Set([]string{fmt.Sprint(n)})), nil
	})
	g.AddConditionalEdges(graph.START, func(ctx context.Context, d Doc) (graph.Route, error) {
		var tasks []graph.Send
		for _, p := range strings.Split(d.Topic, "\n") {
			tasks = append(tasks, count.Send(p))
		}
		return graph.Dispatch(tasks...), nil
	}, "count")
	g.AddEdge("count", graph.END)
	app, err := g.Compile()
	if err != nil {
		log.Fatal(err)
	}
	out, err := app.Invoke(context.Background(), Doc{Topic: "one two\nthree\nfour five six"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Words, out.Notes)
	// Output: 6 [2 1 3]
}

// A subgraph with a state type of its own. The parent maps its state into
// the child's input and the child's result back into an update.
func Example_subgraph() {
	type Spell struct {
		Text    string
		Changes int
	}
	text := graph.Replace(func(s *Spell) *string { return &s.Text })
	changes := graph.Sum(func(s *Spell) *int { return &s.Changes })

	child := graph.New[Spell]()
	child.AddNode("fix", func(ctx context.Context, s Spell) (graph.Update[Spell], error) {
		fixed := strings.ReplaceAll(s.Text, "teh", "the")
		return graph.Updates(text.Set(fixed), changes.Set(strings.Count(s.Text, "teh"))), nil
	})
	child.AddEdge(graph.START, "fix").AddEdge("fix", graph.END)
	spell, err := child.Compile()
	if err != nil {
		log.Fatal(err)
	}

	g := graph.New[Doc]()
	graph.AddSubgraph(g, "spellcheck", spell,
		func(d Doc) Spell { return Spell{Text: d.Topic} },
		func(s Spell) graph.Update[Doc] {
			return graph.Updates(Topic.Set(s.Text), Notes.Set([]string{fmt.Sprintf("%d fixes", s.Changes)}))
		})
	g.AddEdge(graph.START, "spellcheck").AddEdge("spellcheck", graph.END)
	app, err := g.Compile()
	if err != nil {
		log.Fatal(err)
	}
	out, err := app.Invoke(context.Background(), Doc{Topic: "teh cat and teh hat"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Topic, out.Notes)
	// Output: the cat and the hat [2 fixes]
}

// Streaming custom events: a node reports progress with graph.Emit, and the
// caller receives it, between the updates, as the run goes.
func Example_streamCustomEvents() {
	g := graph.New[Doc]()
	g.AddNode("write", func(ctx context.Context, d Doc) (graph.Update[Doc], error) {
		for _, chunk := range []string{"Typed ", "graphs ", "rock."} {
			if err := graph.Emit(ctx, chunk); err != nil {
				return graph.Update[Doc]{}, err // the run stopped
			}
		}
		return Verdict.Set("done"), nil
	})
	g.AddEdge(graph.START, "write").AddEdge("write", graph.END)
	app, err := g.Compile()
	if err != nil {
		log.Fatal(err)
	}
	modes := graph.WithModes(graph.StreamCustom, graph.StreamUpdates)
	for ev, err := range app.Stream(context.Background(), Doc{}, modes) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Mode {
		case graph.StreamCustom:
			fmt.Printf("%s says %q\n", ev.Node, ev.Payload)
		case graph.StreamUpdates:
			fmt.Printf("%s wrote %v\n", ev.Node, ev.Update)
		}
	}
	// Output:
	// write says "Typed "
	// write says "graphs "
	// write says "rock."
	// write wrote {Verdict:done}
}

// A node can write and route at once (LangGraph's Command). Its possible
// destinations are declared with graph.Targets so the graph can be checked
// and drawn.
func ExampleUpdate_Goto() {
	g := graph.New[Doc]()
	g.AddNode("triage", func(ctx context.Context, d Doc) (graph.Update[Doc], error) {
		if strings.Contains(d.Topic, "urgent") {
			return Verdict.Set("escalated").Goto("page"), nil
		}
		return Verdict.Set("queued").Goto(graph.END), nil
	}, graph.Targets("page", graph.END))
	g.AddNode("page", func(ctx context.Context, d Doc) (graph.Update[Doc], error) {
		return Notes.Set([]string{"paged the on-call"}), nil
	})
	g.AddEdge(graph.START, "triage").AddEdge("page", graph.END)
	app, err := g.Compile()
	if err != nil {
		log.Fatal(err)
	}
	out, err := app.Invoke(context.Background(), Doc{Topic: "urgent: disk full"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Verdict, out.Notes)
	// Output: escalated [paged the on-call]
}

// Compile reports every problem of a graph at once.
func ExampleGraph_Compile() {
	g := graph.New[Doc]()
	g.AddNode("a", func(ctx context.Context, d Doc) (graph.Update[Doc], error) { return graph.Update[Doc]{}, nil })
	g.AddEdge(graph.START, "a").AddEdge("a", "b")
	g.AddConditionalEdges("a", func(ctx context.Context, d Doc) (graph.Route, error) { return graph.To(graph.END), nil })
	_, err := g.Compile()
	fmt.Println(err)
	// Output:
	// graph: invalid graph: edge "a" -> "b": unknown target "b"
	// graph: invalid graph: conditional edge from "a": no targets declared; list every node the router may return (END included) after the router
	// graph: invalid graph: node "a" has no way to END: add an edge from it (or from a node after it) to END
}

// Hooks see every node attempt with its task id and duration: the place to
// attach tracing, metrics or an event publisher. NodeStart may return a
// context carrying a span for the node to run under.
func ExampleWithHooks() {
	hooks := graph.Hooks{
		NodeStart: func(ctx context.Context, t graph.TaskInfo) context.Context {
			fmt.Println("start", t.ID())
			return ctx
		},
		NodeEnd: func(ctx context.Context, t graph.TaskInfo, elapsed time.Duration) {
			fmt.Println("end  ", t.ID(), elapsed >= 0)
		},
	}
	g := graph.New[Doc]()
	g.AddNode("outline", func(ctx context.Context, d Doc) (graph.Update[Doc], error) { return Words.Set(1), nil })
	g.AddNode("draft", func(ctx context.Context, d Doc) (graph.Update[Doc], error) { return Words.Set(2), nil })
	g.AddEdge(graph.START, "outline").AddEdge("outline", "draft").AddEdge("draft", graph.END)
	app, err := g.Compile(graph.WithHooks(hooks))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := app.Invoke(context.Background(), Doc{}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// start 1:outline:0
	// end   1:outline:0 true
	// start 2:draft:0
	// end   2:draft:0 true
}

// The run's configuration travels in the context; any node, router or hook
// can read it.
func ExampleConfigFrom() {
	g := graph.New[Doc]()
	g.AddNode("greet", func(ctx context.Context, d Doc) (graph.Update[Doc], error) {
		cfg := graph.ConfigFrom(ctx)
		return Verdict.Set("thread " + cfg.ThreadID + " for " + cfg.Metadata["user"].(string)), nil
	})
	g.AddEdge(graph.START, "greet").AddEdge("greet", graph.END)
	app, err := g.Compile()
	if err != nil {
		log.Fatal(err)
	}
	ctx := graph.WithConfig(context.Background(), graph.RunConfig{
		RunID: "run-1", ThreadID: "t-42", Metadata: map[string]any{"user": "ada"},
	})
	out, err := app.Invoke(ctx, Doc{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Verdict)
	// Output: thread t-42 for ada
}

// Retry a flaky node with backoff, and bound each attempt with a timeout.
func ExampleRetry() {
	calls := 0
	g := graph.New[Doc]()
	g.AddNode("fetch", func(ctx context.Context, d Doc) (graph.Update[Doc], error) {
		calls++
		if calls < 3 {
			return graph.Update[Doc]{}, fmt.Errorf("fetch: temporary failure %d", calls)
		}
		return Notes.Set([]string{"fetched"}), nil
	},
		graph.Retry(graph.RetryPolicy{MaxAttempts: 5, InitialInterval: time.Millisecond}),
		graph.Timeout(time.Second))
	g.AddEdge(graph.START, "fetch").AddEdge("fetch", graph.END)
	app, err := g.Compile()
	if err != nil {
		log.Fatal(err)
	}
	out, err := app.Invoke(context.Background(), Doc{})
	fmt.Println(out.Notes, calls, err)
	// Output: [fetched] 3 <nil>
}
