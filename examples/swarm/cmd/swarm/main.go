// Command swarm runs the supervisor-star swarm on a task and prints the
// supervisor's plans, each agent's work and reflection, and the final
// answer with its sources; or resumes a run; or serves the swarm's web API:
//
//	swarm "Find the price of Acme's Team plan, then calculate the yearly cost for 10 editors"
//	swarm -json "What is 15% of 240?"
//	swarm -resume local.01J...      # a run that was stopped or killed
//	swarm -serve 127.0.0.1:8080     # POST /tasks, SSE progress
//
// Runs, skills and the teams the Architect designs are kept in the data
// folder (SQLite), or in PostgreSQL with -dsn, so a killed run resumes and
// a skill learned by one run is used by the next. With OPENAI_API_KEY,
// ANTHROPIC_API_KEY or OLLAMA_HOST set (see agent.ConfigFromEnv) the models
// are real; without, the swarm's offline rule-based model answers. The MCP
// servers are the chatbot's bundled ones, in process, or those of an
// mcpServers file given with -servers, reloaded when it changes. Ctrl-C
// stops the run; run it again with -resume.
//
// Runs are traced with OpenTelemetry when the standard OTEL_* variables
// name an OTLP/HTTP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, with
// OTEL_EXPORTER_OTLP_HEADERS for Langfuse's key): the trace id is derived
// from the run's thread id, so a resumed run continues its trace, and the
// session id from the trace id (see swarm.Tracing and the README).
//
// Exit status: 0 on success, 1 when the run fails (an unreachable model,
// a database that cannot be opened), 2 for a usage error.
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
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/agent/telemetry/otlp"
	"github.com/agentgraph/agentgraph/examples/swarm"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// defaultDataDir is $XDG_DATA_HOME/agentgraph-swarm, else
// ~/.local/share/agentgraph-swarm.
func defaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "agentgraph-swarm")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "agentgraph-swarm")
	}
	return "agentgraph-swarm"
}

const usageText = `usage: swarm [flags] TASK...
       swarm [flags] -resume THREAD
       swarm [flags] -serve ADDR

Runs the supervisor-star swarm on TASK, resumes the run on THREAD, or
serves the web API (POST /tasks, GET /tasks/{id}, POST /tasks/{id}/resume).

flags:
`

type options struct {
	data, dsn, resume, servers, serve, token string
	json                                     bool
	maxTurns                                 int
}

// run is the command: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("swarm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.data, "data", defaultDataDir(), "data `folder` of the SQLite checkpoints, skills and teams")
	fs.StringVar(&o.dsn, "dsn", os.Getenv("SWARM_DSN"), "PostgreSQL `DSN` to keep them in instead (default $SWARM_DSN)")
	fs.StringVar(&o.resume, "resume", "", "resume the run on `THREAD` (printed by every run)")
	fs.BoolVar(&o.json, "json", false, "print the events as JSON lines; the last one carries the outcome")
	fs.StringVar(&o.servers, "servers", "", "mcpServers JSON `file` of the MCP servers (reloaded when it changes); default: the bundled servers")
	fs.StringVar(&o.serve, "serve", "", "serve the web API on `ADDR`, such as 127.0.0.1:8080")
	fs.StringVar(&o.token, "token", os.Getenv("SWARM_TOKEN"), "bearer `token` the web API requires, needed beyond loopback (default $SWARM_TOKEN)")
	fs.IntVar(&o.maxTurns, "max-turns", 0, "supervisor turns per run (default 8)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageText)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
		return 2
	}
	task := strings.Join(strings.Fields(strings.Join(fs.Args(), " ")), " ")
	modes := 0
	for _, set := range []bool{task != "", o.resume != "", o.serve != ""} {
		if set {
			modes++
		}
	}
	usageErr := func(msg string) int {
		fmt.Fprintf(stderr, "swarm: %s\n\n", msg)
		fs.Usage()
		return 2
	}
	switch {
	case modes == 0:
		return usageErr("give a task, -resume THREAD or -serve ADDR")
	case modes > 1:
		return usageErr("give one of a task, -resume THREAD and -serve ADDR")
	case len(task) > swarm.MaxTaskLen:
		return usageErr(fmt.Sprintf("the task is %d bytes; the limit is %d", len(task), swarm.MaxTaskLen))
	case o.serve != "" && o.token == "" && !loopback(o.serve):
		return usageErr(fmt.Sprintf("-serve %s is beyond loopback; set -token (or $SWARM_TOKEN) to a random secret of at least %d bytes", o.serve, swarm.MinTokenLen))
	case o.data == "" && o.dsn == "":
		return usageErr("-data is empty; give a folder or -dsn")
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "swarm: %v\n", err)
		return 1
	}

	// Tracing as the OTEL_* variables say (OTEL_EXPORTER_OTLP_ENDPOINT
	// and friends); without an endpoint nothing is exported. The run's
	// trace id comes from its thread id, as swarm.Tracing says.
	tel, shutdown, err := otlp.FromEnv(ctx, otlp.Options{ServiceName: "swarm"})
	if err != nil {
		return fail(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			fmt.Fprintln(stderr, "swarm: exporting telemetry:", err)
		}
	}()
	cfg := swarm.Config{MaxTurns: o.maxTurns, ServersFile: o.servers,
		Tracing: &swarm.Tracing{Tracer: tel.Tracer(), Hooks: tel.Hooks()}}
	model := "offline (rule-based demo)"
	if env, err := agent.ConfigFromEnv(); err == nil && (env.OpenAI != nil || env.Anthropic != nil || env.Ollama != nil) {
		client, err := agent.New(env)
		if err != nil {
			return fail(err)
		}
		cfg.Client, model = client, "from the environment"
	}
	st, err := swarm.OpenStorage(ctx, swarm.StorageConfig{DataDir: o.data, DSN: o.dsn})
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	cfg.Checkpointer, cfg.Skills, cfg.Workflows, cfg.Tasks = st.Checkpointer, st.Memory, st.Memory, st.Memory
	s, err := swarm.New(cfg)
	if err != nil {
		return fail(err)
	}
	defer s.Close(context.Background())
	if o.servers != "" {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { _ = s.Watch(wctx, 0) }()
	}
	if o.serve != "" {
		return serve(ctx, s, o, stderr)
	}
	if !o.json {
		where := o.data
		if o.dsn != "" {
			where = "PostgreSQL"
		}
		fmt.Fprintf(stdout, "model: %s\ndata: %s\n", model, where)
	}
	seq := s.Run(ctx, task)
	if o.resume != "" {
		seq = s.Resume(ctx, o.resume)
	}
	enc := json.NewEncoder(stdout)
	thread := ""
	for ev, err := range seq {
		if ev.Thread != "" && thread == "" {
			thread = ev.Thread
			if !o.json {
				fmt.Fprintf(stdout, "thread: %s\n", thread)
			}
		}
		if err != nil {
			if errors.Is(err, swarm.ErrEmptyTask) || errors.Is(err, swarm.ErrTaskTooLong) {
				return usageErr(err.Error())
			}
			if thread != "" {
				fmt.Fprintf(stderr, "swarm: the run stopped; resume it with: swarm -resume %s\n", thread)
			}
			return fail(err)
		}
		if o.json {
			if err := enc.Encode(ev); err != nil {
				return fail(err)
			}
			continue
		}
		switch ev.Kind {
		case swarm.EventDone:
			out := ev.Outcome
			fmt.Fprintf(stdout, "\nstatus: %s after %d supervisor turn(s), %d agent result(s)\nanswer:\n%s\n", out.Status, out.Turns, len(out.Results), out.Answer)
		case swarm.EventAnswer:
		default:
			fmt.Fprintln(stdout, ev)
		}
	}
	return 0
}

// loopback reports whether addr names this machine only; a name such as
// "localhost" is trusted here, and openBeyondLoopback checks the address
// it resolved to once listening.
func loopback(addr string) bool { return guard.LoopbackAddr(addr) }

// openBeyondLoopback returns an error when the API without a token (open)
// listens, on ln, beyond loopback: addr was a name that resolved to
// another address.
func openBeyondLoopback(ln net.Listener, addr string, open bool) error {
	if open && !guard.LoopbackListener(ln) {
		return fmt.Errorf("-serve %s resolved to %s, beyond loopback; set -token (or $SWARM_TOKEN) to a random secret of at least %d bytes, "+
			"or listen on a loopback address (-serve 127.0.0.1:8080)", addr, ln.Addr(), swarm.MinTokenLen)
	}
	return nil
}

// serve runs the web API until ctx ends.
func serve(ctx context.Context, s *swarm.Swarm, o options, stderr io.Writer) int {
	hc := swarm.HTTPConfig{}
	if o.token != "" {
		hc.Tokens = map[string]string{o.token: "user"}
	}
	h, err := s.Handler(hc)
	if err != nil {
		fmt.Fprintf(stderr, "swarm: %v\n", err)
		return 2
	}
	// The handler's guard bounds each body's arrival (guard.DefaultBodyTimeout);
	// a ReadTimeout would also cut the connection of a long task.
	srv := &http.Server{Addr: o.serve, Handler: h, ReadHeaderTimeout: guard.DefaultReadHeaderTimeout,
		IdleTimeout: guard.DefaultIdleTimeout, MaxHeaderBytes: guard.DefaultMaxHeaderBytes}
	ln, err := net.Listen("tcp", o.serve)
	if err != nil {
		fmt.Fprintf(stderr, "swarm: %v\n", err)
		return 1
	}
	if err := openBeyondLoopback(ln, o.serve, o.token == ""); err != nil {
		_ = ln.Close()
		fmt.Fprintf(stderr, "swarm: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "swarm: serving on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "swarm: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return 0
}
