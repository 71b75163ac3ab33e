// Command cortexr answers a query with the Cortex-R loop (perception →
// decision → sandboxed action, with session memory) over the math and web
// search MCP servers running in this process, printing each step.
//
//	go run ./examples/cortexr/cmd/cortexr "Find the ASCII values of characters in INDIA and then return sum of exponentials of those values"
//
// With OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST set (see
// agent.ConfigFromEnv) the model is real; without, the offline demo model
// (cortexr.OfflineModel) answers, so the program runs anywhere. Session
// memory goes to ./memory (-memory to change, "" to keep none).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/examples/cortexr"
)

const defaultQuery = "Find the ASCII values of characters in INDIA and then return sum of exponentials of those values"

func main() {
	memDir := flag.String("memory", "memory", "directory of session memory files; empty keeps none")
	flag.Parse()
	query := strings.Join(flag.Args(), " ")
	if query == "" {
		query = defaultQuery
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, query, *memDir); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, query, memDir string) error {
	client, err := newClient()
	if err != nil {
		return err
	}
	a, err := cortexr.New(cortexr.Config{Client: client, MemoryDir: memDir})
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	fmt.Fprintf(w, "session %s\nquery: %s\n", a.Memory().ID(), query)
	for ev, err := range a.Run(ctx, query) {
		if err != nil {
			return err
		}
		switch ev.Kind {
		case cortexr.EventPerception:
			p := ev.Perception
			fmt.Fprintf(w, "[step %d.%d] perception: intent %q, servers %v, tool hint %q, fallback %v\n", ev.Step, ev.Attempt, p.Intent, p.SelectedServers, p.ToolHint, p.Fallback)
		case cortexr.EventPlan:
			fmt.Fprintf(w, "[step %d.%d] plan:\n%s\n", ev.Step, ev.Attempt, indent(ev.Plan))
		case cortexr.EventToolCall:
			if ev.Tool.Error != "" {
				fmt.Fprintf(w, "[step %d.%d] tool %s(%v) failed: %s\n", ev.Step, ev.Attempt, ev.Tool.Name, ev.Tool.Args, ev.Tool.Error)
			} else {
				fmt.Fprintf(w, "[step %d.%d] tool %s(%v) = %v\n", ev.Step, ev.Attempt, ev.Tool.Name, ev.Tool.Args, ev.Tool.Result)
			}
		case cortexr.EventAction:
			if ev.Error != "" {
				fmt.Fprintf(w, "[step %d.%d] action failed: %s\n", ev.Step, ev.Attempt, ev.Error)
			} else {
				fmt.Fprintf(w, "[step %d.%d] action: %s\n", ev.Step, ev.Attempt, ev.Result)
			}
		case cortexr.EventAnswer:
			fmt.Fprintf(w, "%s after %d step(s): %s\n", ev.Answer.Outcome, ev.Answer.Steps, ev.Answer.Text)
		}
	}
	if p := a.Memory().Path(); p != "" {
		fmt.Fprintf(w, "memory: %s\n", p)
	}
	return nil
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// newClient returns the agent client over the configured providers, or nil
// (the offline model) when none is configured.
func newClient() (*agent.Client, error) {
	cfg, err := agent.ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	if cfg.OpenAI == nil && cfg.Anthropic == nil && cfg.Ollama == nil {
		fmt.Fprintln(os.Stderr, "no model configured (set OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST); using the offline demo model")
		return nil, nil
	}
	return agent.New(cfg)
}
