// Command swarm runs the supervisor-star swarm on a task given as its
// arguments and prints the supervisor's plans, each agent's work and
// reflection, and the final answer:
//
//	go run ./examples/swarm/cmd/swarm "Find the price of Acme's Team plan, then calculate the yearly cost for 10 editors"
//
// With OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST set (see
// agent.ConfigFromEnv) the models are real; without, the swarm's offline
// rule-based model answers, so the program runs anywhere. The MCP servers
// are the chatbot's bundled ones (knowledge, calculator, websearch), in this
// process. Ctrl-C stops the run.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/examples/swarm"
)

const defaultTask = "Find what Acme's Team plan costs per editor, then calculate the yearly cost for 10 editors"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	tasks := []string{strings.Join(os.Args[1:], " ")}
	if tasks[0] == "" {
		tasks[0] = defaultTask
	}
	if err := run(ctx, os.Stdout, tasks...); err != nil {
		log.Fatal(err)
	}
}

// run runs the tasks one after the other on one swarm, so a later task can
// use the skills of an earlier one.
func run(ctx context.Context, w io.Writer, tasks ...string) error {
	cfg := swarm.Config{}
	if env, err := agent.ConfigFromEnv(); err == nil && (env.OpenAI != nil || env.Anthropic != nil || env.Ollama != nil) {
		client, err := agent.New(env)
		if err != nil {
			return err
		}
		cfg.Client = client
		fmt.Fprintln(w, "model: from the environment")
	} else {
		fmt.Fprintln(w, "model: offline (rule-based demo)")
	}
	s, err := swarm.New(cfg)
	if err != nil {
		return err
	}
	defer s.Close(context.Background())
	for _, task := range tasks {
		fmt.Fprintf(w, "\ntask: %s\n", task)
		for ev, err := range s.Run(ctx, task) {
			if err != nil {
				return err
			}
			if ev.Kind == swarm.EventDone {
				o := ev.Outcome
				fmt.Fprintf(w, "\nstatus: %s after %d supervisor turn(s), %d agent result(s)\nanswer:\n%s\n", o.Status, o.Turns, len(o.Results), o.Answer)
				continue
			}
			if ev.Kind != swarm.EventAnswer {
				fmt.Fprintln(w, ev)
			}
		}
	}
	return nil
}
