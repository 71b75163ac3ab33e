// Command bosai asks Bos-AI one question and prints what happens: the
// plan, each agent's progress and result, the composed answer and the
// trace.
//
//	go run ./examples/bosai/cmd/bosai "What does the Team plan cost per editor, and what is 12 * 49?"
//
// With OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST set (see
// agent.ConfigFromEnv) the model is real; without, or with -offline, the
// rule-based offline model answers, so the program runs anywhere.
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

	"github.com/agentgraph/agentgraph/examples/bosai"
)

func main() {
	offline := flag.Bool("offline", false, "use the offline model even if a provider is configured")
	flag.Parse()
	question := strings.Join(flag.Args(), " ")
	if question == "" {
		question = "What does the Team plan cost per editor, and what is 12 * 49?"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, bosai.Config{Offline: *offline}, question); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, cfg bosai.Config, question string) error {
	bot, err := bosai.New(cfg)
	if err != nil {
		return err
	}
	defer bot.Close(context.Background())

	fmt.Fprintf(w, "question: %s\n\n", question)
	var resp *bosai.Response
	for ev, err := range bot.Run(ctx, bosai.Request{Question: question, Trace: true}) {
		if err != nil {
			return err
		}
		if ev.Response != nil {
			resp = ev.Response
			continue
		}
		t := ev.Trace
		switch {
		case t.Agent == bosai.AgentPlanner && t.Kind == bosai.TraceDecision:
			fmt.Fprintf(w, "plan: %v (confidence %.2f): %s\n", t.Data["agents"], t.Data["confidence"], t.Data["rationale"])
		case t.Kind == bosai.TraceResult && t.Agent != bosai.AgentComposer:
			fmt.Fprintf(w, "[%s] result: %s\n", t.Agent, t.Data["answer"])
		case t.Kind == bosai.TraceError:
			fmt.Fprintf(w, "[%s] error: %s\n", t.Agent, t.Data["error"])
		default:
			fmt.Fprintf(w, "[%s] %s\n", t.Agent, t.Message)
		}
	}
	if resp == nil {
		return fmt.Errorf("bosai: no response")
	}
	fmt.Fprintf(w, "\nanswer: %s\n", resp.Answer)
	if resp.Data != nil {
		fmt.Fprintf(w, "\ndata (%d rows): %s\n", resp.Data.RowCount, strings.Join(resp.Data.Columns, " | "))
		for _, row := range resp.Data.Rows {
			var cells []string
			for _, c := range resp.Data.Columns {
				v := row[c]
				if v == nil {
					v = ""
				}
				cells = append(cells, clip(fmt.Sprint(v), 40))
			}
			fmt.Fprintf(w, "  %s\n", strings.Join(cells, " | "))
		}
	}
	fmt.Fprintf(w, "\ntrace (thread %s):\n", resp.Thread)
	for i, t := range resp.Trace {
		fmt.Fprintf(w, "%2d %-8s %-11s %s\n", i+1, t.Kind, t.Agent, t.Message)
	}
	return nil
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
