// Command cortexr answers queries with the Cortex-R loop (perception →
// decision → sandboxed action, with session memory) over the math, web
// search and document MCP servers running in this process, printing each
// step.
//
//	go run ./examples/cortexr/cmd/cortexr "Find the ASCII values of characters in INDIA and then return sum of exponentials of those values"
//	go run ./examples/cortexr/cmd/cortexr "Summarize this webpage: https://example.com"
//	go run ./examples/cortexr/cmd/cortexr            # interactive
//
// With a query it answers it and exits: 0 when answered, 1 when the run
// failed, hit the step limit or could not reach the model, 2 on a usage
// error (such as an empty query). Without one it reads queries from
// standard input, one a line, in one session until "new" starts another;
// "exit" or end of input ends it.
//
// Runs are traced with OpenTelemetry when the standard OTEL_* variables
// name an OTLP/HTTP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, with
// OTEL_EXPORTER_OTLP_HEADERS for Langfuse's key); see the README.
//
// With OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST set (see
// agent.ConfigFromEnv) the model is real; without, the offline demo model
// (cortexr.OfflineModel) answers, so the program runs anywhere. -profile
// reads the seed's profiles.yaml; flags override it.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/agent/telemetry/otlp"
	"github.com/agentgraph/agentgraph/examples/cortexr"
	"github.com/agentgraph/agentgraph/examples/cortexr/rag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cortexr", flag.ContinueOnError)
	fs.SetOutput(stderr)
	profile := fs.String("profile", "", "the seed's profiles.yaml (strategy, memory, persona, MCP servers)")
	memDir := fs.String("memory", "", "directory of session memory files (default: the profile's, else ./memory); \"none\" keeps none")
	images := fs.String("images", "", "the directory create_thumbnail reads images from (empty: none)")
	strategy := fs.String("strategy", "", "planning strategy: conservative, exploratory_parallel or exploratory_sequential (default: the profile's, else exploratory_sequential)")
	fallback := fs.Bool("memory-fallback", false, "after a failed attempt offer the tools that worked before in this session (memory_fallback_enabled)")
	docs := fs.String("docs", "", "folder of documents for the document server (default: the bundled demo set)")
	web := fs.Bool("web", false, "fetch web pages from the internet instead of the bundled offline page set")
	webAllow := fs.String("web-allow", "", "with -web, comma-separated address ranges that are not public but may be fetched, e.g. 10.1.0.0/16 for an intranet (by default only public internet addresses are)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cortexr [flags] [query]\n\nWithout a query, cortexr reads queries from standard input (\"new\" starts a new session, \"exit\" ends).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *webAllow != "" && !*web {
		fmt.Fprintln(stderr, "cortexr: -web-allow applies to -web; add -web to fetch web pages")
		return exitUsage
	}
	query := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if fs.NArg() > 0 && query == "" {
		fmt.Fprintln(stderr, "cortexr: the query is empty; give a question, or no argument for the interactive mode")
		return exitUsage
	}
	cfg := cortexr.Config{MemoryDir: "memory", ImageDir: *images}
	if *profile != "" {
		p, err := cortexr.LoadProfile(*profile)
		if err == nil {
			err = p.Apply(&cfg)
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["memory"] {
		cfg.MemoryDir = *memDir
		if *memDir == "none" {
			cfg.MemoryDir = ""
		}
	}
	if set["strategy"] {
		s, err := cortexr.ParseStrategy(*strategy, "")
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
		cfg.Strategy = s
	}
	if set["memory-fallback"] {
		cfg.MemoryFallback = *fallback
	}
	if *docs != "" || *web {
		dc := cortexr.DemoDocuments()
		if *docs != "" {
			dc.Docs, dc.URLs = os.DirFS(*docs), nil
		}
		if *web {
			f := rag.HTTPFetcher{}
			for _, r := range strings.Split(*webAllow, ",") {
				if r = strings.TrimSpace(r); r == "" {
					continue
				}
				p, err := netip.ParsePrefix(r)
				if err != nil {
					fmt.Fprintf(stderr, "cortexr: -web-allow: %q is not an address range; give one such as 10.1.0.0/16 or 192.168.1.7/32\n", r)
					return exitUsage
				}
				f.Net.Allow = append(f.Net.Allow, p)
			}
			dc.Fetcher = f
		}
		cfg.Documents = &dc
		if len(cfg.Servers) > 0 {
			fmt.Fprintln(stderr, "cortexr: -docs and -web apply to the default servers; remove mcp_servers from the profile or the flags")
			return exitUsage
		}
	}
	m, err := newModel(stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	cfg.Model = m
	// Tracing as the OTEL_* variables say (OTEL_EXPORTER_OTLP_ENDPOINT
	// and friends); without an endpoint nothing is exported.
	tel, shutdown, err := otlp.FromEnv(ctx, otlp.Options{ServiceName: "cortexr"})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			fmt.Fprintln(stderr, "cortexr: exporting telemetry:", err)
		}
	}()
	cfg.Hooks = tel.Hooks()

	if query != "" {
		a, err := cortexr.New(cfg)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
		defer a.Close(context.Background())
		fmt.Fprintf(stdout, "session %s\n", a.Memory().ID())
		return answer(ctx, a, query, stdout, stderr)
	}
	return interactive(ctx, cfg, stdin, stdout, stderr)
}

// interactive answers the queries of stdin in one session until "new".
func interactive(ctx context.Context, cfg cortexr.Config, stdin io.Reader, stdout, stderr io.Writer) int {
	a, err := cortexr.New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	defer func() { a.Close(context.Background()) }()
	fmt.Fprintf(stdout, "session %s (type a query; \"new\" starts a new session, \"exit\" ends)\n", a.Memory().ID())
	sc := bufio.NewScanner(stdin)
	code := exitOK
	for {
		fmt.Fprint(stdout, "> ")
		if !sc.Scan() || ctx.Err() != nil {
			fmt.Fprintln(stdout)
			return code
		}
		switch line := strings.TrimSpace(sc.Text()); strings.ToLower(line) {
		case "":
		case "exit", "quit":
			return code
		case "new":
			a.Close(context.Background())
			cfg.SessionID = ""
			if a, err = cortexr.New(cfg); err != nil {
				fmt.Fprintln(stderr, err)
				return exitFailed
			}
			fmt.Fprintf(stdout, "new session %s\n", a.Memory().ID())
		default:
			code = answer(ctx, a, line, stdout, stderr)
		}
	}
}

// answer runs one query, printing its steps, and returns its exit code.
func answer(ctx context.Context, a *cortexr.Agent, query string, w, stderr io.Writer) int {
	fmt.Fprintf(w, "query: %s\n", query)
	code := exitFailed
	for ev, err := range a.Run(ctx, query) {
		if err != nil {
			if errors.Is(err, cortexr.ErrEmptyQuery) {
				fmt.Fprintln(stderr, err)
				return exitUsage
			}
			fmt.Fprintf(stderr, "cortexr: the run stopped: %v\n", err)
			return exitFailed
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
				fmt.Fprintf(w, "[step %d.%d] tool %s(%v) = %v\n", ev.Step, ev.Attempt, ev.Tool.Name, ev.Tool.Args, truncate(fmt.Sprint(ev.Tool.Result), 300))
			}
		case cortexr.EventAction:
			if ev.Error != "" {
				fmt.Fprintf(w, "[step %d.%d] action failed: %s\n", ev.Step, ev.Attempt, ev.Error)
			} else {
				fmt.Fprintf(w, "[step %d.%d] action: %s\n", ev.Step, ev.Attempt, truncate(ev.Result, 300))
			}
		case cortexr.EventAnswer:
			fmt.Fprintf(w, "%s after %d step(s): %s\n", ev.Answer.Outcome, ev.Answer.Steps, ev.Answer.Text)
			if ev.Answer.Outcome == cortexr.OutcomeAnswered {
				code = exitOK
			}
			printMetrics(w, ev.Answer.Metrics)
		}
	}
	if p := a.Memory().Path(); p != "" {
		fmt.Fprintf(w, "memory: %s\n", p)
	}
	return code
}

// printMetrics prints a run's performance metrics: time per attempt and
// per tool.
func printMetrics(w io.Writer, m cortexr.Metrics) {
	for _, a := range m.Attempts {
		fmt.Fprintf(w, "  step %d.%d: perception %v, decision %v, action %v, %d tool call(s)\n", a.Step, a.Attempt, a.Perception.Round(time.Microsecond), a.Decision.Round(time.Microsecond), a.Action.Round(time.Microsecond), a.ToolCalls)
	}
	names := slices.Sorted(maps.Keys(m.Tools))
	for _, n := range names {
		t := m.Tools[n]
		fmt.Fprintf(w, "  tool %s: %d call(s), %d failed, mean %v, max %v\n", n, t.Calls, t.Failures, (t.Total / time.Duration(t.Calls)).Round(time.Microsecond), t.Max.Round(time.Microsecond))
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// newClient returns the agent client over the configured providers, or nil
// (the offline model) when none is configured.
func newModel(stderr io.Writer) (model.Model, error) {
	if len(provider.Configured()) == 0 && strings.TrimSpace(os.Getenv(provider.EnvModel)) == "" {
		fmt.Fprintln(stderr, "no model configured (set OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST); using the offline demo model")
		return nil, nil
	}
	return provider.FromEnv()
}
