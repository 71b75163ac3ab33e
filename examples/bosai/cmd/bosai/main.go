// Command bosai asks Bos-AI one question and prints what happens: the
// plan, each agent's progress and result, the composed answer and the
// trace.
//
//	go run ./examples/bosai/cmd/bosai "How many customers are there per country, and what is 12 * 49?"
//	go run ./examples/bosai/cmd/bosai -json -context api_bearer_token=… -disable computation "Any critical incidents?"
//	go run ./examples/bosai/cmd/bosai -serve 127.0.0.1:8080
//	BOSAI_TOKENS="alice=$(openssl rand -hex 16)" go run ./examples/bosai/cmd/bosai -serve :8080
//
// Flags: -context key=value (repeatable), -prefer and -disable (agent
// names, comma-separated), -max-turns, -system, -trace, -json (print the
// Response as JSON), -serve (the HTTP API, bosai.Handler, instead of one
// question), -offline. An empty question is a usage error (exit 2); a run
// that fails, or whose agents all fail, exits 1.
//
// With -serve, callers authenticate with bearer tokens: BOSAI_TOKENS holds
// principal=token pairs, comma-separated, and -tokens FILE "principal
// token" lines (tokens of at least 16 random bytes). Without tokens the
// API serves this machine only: -serve must be a loopback address, and
// only loopback Host names are served. -allow-host and -allow-origin add
// host names (behind a proxy) and browser origins.
//
// Runs are traced with OpenTelemetry when the standard OTEL_* variables
// name an OTLP/HTTP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, with
// OTEL_EXPORTER_OTLP_HEADERS for Langfuse's key); see the README.
//
// With OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST set (see
// provider.FromEnv) the model is real; without, or with -offline, the
// rule-based offline model answers, so the program runs anywhere.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/agent/telemetry/otlp"
	"github.com/agentgraph/agentgraph/examples/bosai"
	"github.com/agentgraph/agentgraph/examples/internal/cmdflag"
)

// contextFlag collects -context key=value pairs.
type contextFlag map[string]string

func (c contextFlag) String() string { return fmt.Sprint(map[string]string(c)) }

func (c contextFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	c[strings.TrimSpace(k)] = v
	return nil
}

func agents(s string) []bosai.AgentName {
	var out []bosai.AgentName
	for _, a := range cmdflag.List(s) {
		out = append(out, bosai.AgentName(a))
	}
	return out
}

// errUsage marks a usage error (exit 2).
var errUsage = errors.New("usage")

// errFailed marks a run whose agents all failed (exit 1).
var errFailed = errors.New("every agent failed")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := cli(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "bosai:", err)
		os.Exit(1)
	}
}

// cli parses args and runs one question (or the HTTP API with -serve).
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bosai", flag.ContinueOnError)
	fs.SetOutput(stderr)
	offline := fs.Bool("offline", false, "use the offline demo model even if a provider is configured")
	asJSON := fs.Bool("json", false, "print the response as JSON")
	trace := fs.Bool("trace", false, "include the trace in the response")
	prefer := fs.String("prefer", "", "agents to run first, comma-separated (api_docs, sql, computation)")
	disable := fs.String("disable", "", "agents not to run, comma-separated")
	maxTurns := fs.Int("max-turns", 0, "run at most this many agents (0: no bound)")
	system := fs.String("system", "", "the composer's system prompt")
	serve := fs.String("serve", "", "serve the HTTP API (POST /v1/ask) on this address instead of asking")
	tokensFile := fs.String("tokens", "", "with -serve: a file of \"principal token\" lines, readable by its owner (and group) only; callers send Authorization: Bearer TOKEN (also $BOSAI_TOKENS, principal=token,...)")
	hosts := fs.String("allow-host", "", "with -serve: comma-separated host names served besides the defaults")
	origins := fs.String("allow-origin", "", "with -serve: comma-separated browser origins allowed to call the API")
	kv := contextFlag{}
	fs.Var(kv, "context", "request context as key=value (repeatable), e.g. api_bearer_token=…; the API's base URL is $BOSAI_API_BASE_URL")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bosai [flags] question...\n       bosai -serve addr [flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	// Tracing as the OTEL_* variables say (OTEL_EXPORTER_OTLP_ENDPOINT
	// and friends); without an endpoint nothing is exported.
	tel, shutdown, err := otlp.FromEnv(ctx, otlp.Options{ServiceName: "bosai"})
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			fmt.Fprintln(stderr, "bosai: exporting telemetry:", err)
		}
	}()
	cfg := bosai.Config{Offline: *offline, Hooks: tel.Hooks()}
	if *serve != "" {
		tokens, err := loadTokens(*tokensFile, os.Getenv("BOSAI_TOKENS"))
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		hc := bosai.HTTPConfig{Tokens: tokens, AllowedHosts: cmdflag.List(*hosts), AllowedOrigins: cmdflag.List(*origins)}
		if err := serveHTTP(ctx, *serve, cfg, hc, stderr); err != nil {
			if errors.Is(err, errUsage) {
				fmt.Fprintln(stderr, "bosai:", err)
			}
			return err
		}
		return nil
	}
	req := bosai.Request{Question: strings.Join(fs.Args(), " "), Context: kv, Prefer: agents(*prefer), Disable: agents(*disable),
		MaxTurns: *maxTurns, Trace: *trace || !*asJSON, SystemPrompt: *system}
	if err := req.Normalize().Validate(); err != nil {
		fmt.Fprintln(stderr, "bosai:", err)
		fs.Usage()
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *asJSON {
		return runJSON(ctx, stdout, cfg, req)
	}
	return run(ctx, stdout, cfg, req)
}

// serveHTTP serves the HTTP API on addr until ctx ends: behind
// bosai.Handler's guard, with the guard's header and idle timeouts. An
// API without tokens listens on loopback only.
func serveHTTP(ctx context.Context, addr string, cfg bosai.Config, hc bosai.HTTPConfig, stderr io.Writer) error {
	if len(hc.Tokens) == 0 && !guard.LoopbackAddr(addr) {
		return fmt.Errorf("%w: -serve %s: serving beyond this machine needs authentication; set BOSAI_TOKENS=\"principal=token,...\" "+
			"or -tokens FILE (tokens of at least %d random bytes), or listen on loopback only (-serve 127.0.0.1:8080)", errUsage, addr, guard.MinTokenLen)
	}
	bot, err := bosai.New(cfg)
	if err != nil {
		return err
	}
	defer bot.Close(context.Background())
	h, err := bosai.Handler(bot, hc)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("-serve: %w", err)
	}
	if err := openBeyondLoopback(ln, addr, len(hc.Tokens) == 0); err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: guard.DefaultReadHeaderTimeout, IdleTimeout: guard.DefaultIdleTimeout,
		MaxHeaderBytes: guard.DefaultMaxHeaderBytes}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stderr, "bosai: serving POST http://%s/v1/ask\n", ln.Addr())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-served
	return err
}

// openBeyondLoopback returns an error when the API without tokens (open)
// listens, on ln, beyond loopback: addr was a name (such as "localhost")
// that resolved to another address.
func openBeyondLoopback(ln net.Listener, addr string, open bool) error {
	if open && !guard.LoopbackListener(ln) {
		return fmt.Errorf("%w: -serve %s resolved to %s, beyond this machine, which needs authentication; set BOSAI_TOKENS=\"principal=token,...\" "+
			"or -tokens FILE (tokens of at least %d random bytes), or listen on a loopback address (-serve 127.0.0.1:8080)", errUsage, addr, ln.Addr(), guard.MinTokenLen)
	}
	return nil
}

// loadTokens reads the bearer tokens of the server: guard.LoadTokens of
// the -tokens file and the BOSAI_TOKENS pairs in env.
func loadTokens(path, env string) (map[string]string, error) {
	return guard.LoadTokens(path, env, "BOSAI_TOKENS")
}

// failed reports a response none of whose agents succeeded.
func failed(resp *bosai.Response) error {
	ran := 0
	for _, r := range resp.Results {
		if r.Status == bosai.StatusSucceeded {
			return nil
		}
		if r.Status == bosai.StatusFailed {
			ran++
		}
	}
	if ran > 0 {
		return errFailed
	}
	return nil
}

func runJSON(ctx context.Context, w io.Writer, cfg bosai.Config, req bosai.Request) error {
	bot, err := bosai.New(cfg)
	if err != nil {
		return err
	}
	defer bot.Close(context.Background())
	resp, err := bot.Ask(ctx, req)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(resp); err != nil {
		return err
	}
	return failed(resp)
}

func run(ctx context.Context, w io.Writer, cfg bosai.Config, req bosai.Request) error {
	bot, err := bosai.New(cfg)
	if err != nil {
		return err
	}
	defer bot.Close(context.Background())

	fmt.Fprintf(w, "question: %s\n\n", req.Question)
	var resp *bosai.Response
	for ev, err := range bot.Run(ctx, req) {
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
	return failed(resp)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
