// Command chatbot runs agentgraph's reference chatbot.
//
//	chatbot [serve] [-addr 127.0.0.1:8080] [-tokens FILE] [-allow-host H,...] [-allow-origin O,...] [-trust-local-proxy] [-data ./data | -postgres DSN [-nats URL]] [-mcp servers.json] [-offline] [-cognition]
//	chatbot ask [-data ./data] [-mcp servers.json] [-offline] [-cognition [-user ID]] [-conversation ID] [-no-input] "question"
//
// serve (the default) serves the HTTP API and prints its URL; SIGINT or
// SIGTERM stops accepting requests, ends at once the turns waiting for an
// answer to a question (their streams get an error event), lets the other
// requests in flight finish (up to -drain), then shuts the MCP servers
// down.
//
// serve listens on 127.0.0.1:8080 by default, open to anyone on this
// machine (the demo). Any other address needs authentication: bearer
// tokens from the environment, CHATBOT_TOKENS="alice=TOKEN,bob=TOKEN"
// (principal=token pairs, tokens of at least 16 bytes), or from a file,
// -tokens FILE (one "principal token" pair a line, # comments). Clients
// send "Authorization: Bearer TOKEN"; the web page takes the token once in
// the fragment, /#token=TOKEN (never sent to the server), or in its token
// field. -allow-host names host names
// served besides the loopback ones (a name beyond loopback, such as a
// reverse proxy's, needs authentication: without it the bot serves this
// machine only, and refuses requests that came through a proxy);
// -allow-origin names browser origins allowed besides the page's own;
// -trust-local-proxy, without authentication, serves requests through a
// development proxy on this machine whose X-Forwarded-For names loopback
// clients only (a proxy that passes the client's own headers on would let
// anyone forge them). ask runs one turn in the
// terminal, showing the bot's progress on stderr and streaming the answer
// to stdout. When the turn asks the user something (a tool's elicitation:
// a yes/no question, a choice, or a form), ask shows the question on
// stderr and reads the answer from stdin, field by field, asking again
// after invalid input; the end of stdin (Ctrl-D, or a closed or empty
// pipe) and -no-input decline the question, and SIGINT (Ctrl-C) cancels
// the turn.
//
// -cognition turns on cognition (chatbot.Config.Cognition): the bot learns
// about each user across conversations, with one more model call per turn
// in the background, and keeps it in DATA/cognition.db. serve learns about
// the users named by the requests' user_id; ask about -user ("local" by
// default), and waits for the turn's learning before it exits, for up to
// 10 seconds (it says so when it gives up; the turn is then not
// remembered).
//
// -postgres DSN (or CHATBOT_POSTGRES) keeps every store in PostgreSQL
// instead of the SQLite files of -data; several instances on one database
// then serve one set of conversations, turns resumable on any instance
// (their events journaled in PostgreSQL) and answered or stopped through
// any (relayed with LISTEN/NOTIFY). -nats URL (or CHATBOT_NATS) relays the
// answers and stops over NATS instead, and journals the turns in JetStream
// unless -turn-journal postgres. Two instances:
//
//	chatbot serve -addr :8081 -postgres postgres://localhost/chat -nats nats://localhost:4222 -tokens tokens.txt
//	chatbot serve -addr :8082 -postgres postgres://localhost/chat -nats nats://localhost:4222 -tokens tokens.txt
//
// With no API key in the environment the bot runs in demo mode on an
// offline rule-based model; set OPENAI_API_KEY, ANTHROPIC_API_KEY or
// OLLAMA_HOST for a real one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/agent/telemetry/otlp"
	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/examples/internal/cmdflag"
	"github.com/agentgraph/agentgraph/graph"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "chatbot:", err)
		}
		os.Exit(1)
	}
}

// run runs the command with args (without the program name) until ctx
// ends. stdin is read only by ask, for the answers to the turn's
// questions.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	if cmd != "serve" && cmd != "ask" {
		return fmt.Errorf("unknown command %q; use serve or ask", cmd)
	}
	// Tracing as the OTEL_* variables say (OTEL_EXPORTER_OTLP_ENDPOINT
	// and friends); without an endpoint nothing is exported.
	tel, shutdown, err := otlp.FromEnv(ctx, otlp.Options{ServiceName: "chatbot"})
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			fmt.Fprintln(stderr, "chatbot: exporting telemetry:", err)
		}
	}()
	if cmd == "serve" {
		return serve(ctx, tel.Hooks(), args, stdout, stderr)
	}
	return ask(ctx, tel.Hooks(), args, stdin, stdout, stderr)
}

// common are the flags of both commands.
type common struct {
	data, mcp string
	// postgres, schema, nats and prefix: the shared stores and events
	// of several instances (chatbot.Config.Postgres and friends).
	postgres, schema, nats, prefix string
	turnJournal                    string
	bundled                        string // "all", "none" or a comma-separated list
	offline                        bool
	verbose                        bool
	cognition                      bool
	hooks                          graph.Hooks // trace the chat graph's runs
	// maxConvs and maxTurns are -max-conversations and
	// -max-conversation-turns as given (or their environment
	// variables'), read by config.
	maxConvs, maxTurns string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.data, "data", "./data", "directory of the SQLite databases (unused with -postgres)")
	fs.StringVar(&c.postgres, "postgres", os.Getenv("CHATBOT_POSTGRES"), "PostgreSQL DSN keeping every store instead of -data, shareable by several instances (or CHATBOT_POSTGRES)")
	fs.StringVar(&c.schema, "postgres-schema", os.Getenv("CHATBOT_POSTGRES_SCHEMA"), "PostgreSQL schema of the tables (or CHATBOT_POSTGRES_SCHEMA; default the search_path's)")
	fs.StringVar(&c.nats, "nats", os.Getenv("CHATBOT_NATS"), "NATS URL (JetStream on) through which instances sharing -postgres serve one set of conversations (or CHATBOT_NATS)")
	fs.StringVar(&c.prefix, "nats-prefix", os.Getenv("CHATBOT_NATS_PREFIX"), `NATS subject prefix and stream name of the instances (or CHATBOT_NATS_PREFIX; default "chatbot")`)
	fs.StringVar(&c.turnJournal, "turn-journal", os.Getenv("CHATBOT_TURN_JOURNAL"), `where resumable turns are kept for the other instances: "nats" or "postgres" (or CHATBOT_TURN_JOURNAL; default "nats" with -nats, else "postgres" with -postgres)`)
	fs.StringVar(&c.mcp, "mcp", "", "mcpServers JSON file of extra MCP servers")
	fs.StringVar(&c.bundled, "bundled", "all", `bundled MCP servers to run: "all", "none", or a comma-separated list of knowledge, calculator, websearch`)
	fs.BoolVar(&c.offline, "offline", false, "use the offline demo model even when an API key is set")
	fs.BoolVar(&c.verbose, "v", false, "log in detail")
	fs.BoolVar(&c.cognition, "cognition", false, "learn about users across conversations (one more model call per turn, in the background)")
	fs.StringVar(&c.maxConvs, "max-conversations", os.Getenv("CHATBOT_MAX_CONVERSATIONS"),
		fmt.Sprintf("conversations one principal keeps, 1 to 200; a turn starting one more is refused (or CHATBOT_MAX_CONVERSATIONS; default %d)", chatbot.DefaultMaxConversations))
	fs.StringVar(&c.maxTurns, "max-conversation-turns", os.Getenv("CHATBOT_MAX_CONVERSATION_TURNS"),
		fmt.Sprintf("turns one conversation keeps; a turn past them is refused (or CHATBOT_MAX_CONVERSATION_TURNS; default %d)", chatbot.DefaultMaxConversationTurns))
}

// count reads the count value given to flag (or to its environment
// variable env): empty is zero, the default.
func count(flag, env, value string) (int, error) {
	if strings.TrimSpace(value) == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("-%s (or %s) is %q; give a positive whole number, or leave it out for the default", flag, env, value)
	}
	return n, nil
}

func (c *common) config(logger *zap.Logger) (chatbot.Config, error) {
	cfg := chatbot.Config{DataDir: c.data, MCPConfigPath: c.mcp, Offline: c.offline, Logger: logger, Hooks: c.hooks,
		Postgres: c.postgres, PostgresSchema: c.schema, NATS: c.nats, NATSPrefix: c.prefix, TurnJournal: c.turnJournal}
	var errConvs, errTurns error
	cfg.MaxConversations, errConvs = count("max-conversations", "CHATBOT_MAX_CONVERSATIONS", c.maxConvs)
	cfg.MaxConversationTurns, errTurns = count("max-conversation-turns", "CHATBOT_MAX_CONVERSATION_TURNS", c.maxTurns)
	if err := errors.Join(errConvs, errTurns); err != nil {
		return cfg, err
	}
	switch b := strings.TrimSpace(c.bundled); b {
	case "all", "":
	case "none":
		cfg.NoBundledServers = true
	default:
		cfg.BundledServers = append([]string{}, cmdflag.List(b)...)
	}
	if c.cognition {
		cfg.Cognition = &chatbot.CognitionConfig{}
	}
	return cfg, nil
}

func newLogger(stderr io.Writer, verbose bool) *zap.Logger {
	cfg := zap.NewDevelopmentEncoderConfig()
	level := zap.InfoLevel
	if verbose {
		level = zap.DebugLevel
	}
	return zap.New(zapcoreFor(cfg, stderr, level))
}

func serve(ctx context.Context, hooks graph.Hooks, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chatbot serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := common{hooks: hooks}
	c.register(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on, HOST:PORT; other than loopback it needs -tokens or CHATBOT_TOKENS")
	drain := fs.Duration("drain", 30*time.Second, "how long to let requests in flight finish on shutdown")
	tokensFile := fs.String("tokens", "", `file of bearer tokens, one "principal token" pair a line, readable by its owner (and group) only (or set CHATBOT_TOKENS="principal=token,...")`)
	hosts := fs.String("allow-host", "", "comma-separated host names served besides the loopback names; names beyond loopback (such as a reverse proxy's) need -tokens or CHATBOT_TOKENS")
	origins := fs.String("allow-origin", "", "comma-separated browser origins allowed to call the API besides the page's own")
	trustProxy := fs.Bool("trust-local-proxy", false, "without tokens, serve requests through a development proxy on this machine "+
		"whose X-Forwarded-For names loopback clients only; only for a proxy that sets these headers itself")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	tokens, err := loadTokens(*tokensFile, os.Getenv("CHATBOT_TOKENS"))
	if err != nil {
		return err
	}
	if len(tokens) == 0 && !chatbot.IsLoopback(*addr) {
		return fmt.Errorf("-addr %s: serving beyond this machine needs authentication; set CHATBOT_TOKENS=\"principal=token,...\" "+
			"or -tokens FILE (tokens of at least %d random bytes), or listen on loopback only (-addr 127.0.0.1:8080)", *addr, chatbot.MinTokenLen)
	}
	for _, h := range cmdflag.List(*hosts) {
		if len(tokens) == 0 && !guard.LoopbackHost(h) {
			return fmt.Errorf("-allow-host %s: serving a name beyond this machine (such as a reverse proxy's) needs authentication; "+
				"set CHATBOT_TOKENS=\"principal=token,...\" or -tokens FILE (tokens of at least %d random bytes)", h, chatbot.MinTokenLen)
		}
	}
	logger := newLogger(stderr, c.verbose)
	defer logger.Sync() //nolint:errcheck
	cfg, err := c.config(logger)
	if err != nil {
		return err
	}
	cfg.Tokens, cfg.AllowedHosts, cfg.AllowedOrigins = tokens, cmdflag.List(*hosts), cmdflag.List(*origins)
	cfg.TrustLocalProxy = *trustProxy
	bot, err := chatbot.New(ctx, cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		_ = bot.Close(context.WithoutCancel(ctx))
		return fmt.Errorf("-addr: %w", err)
	}
	if len(tokens) == 0 && !guard.LoopbackListener(ln) {
		// A name such as "localhost" may resolve to any address.
		_ = ln.Close()
		_ = bot.Close(context.WithoutCancel(ctx))
		return fmt.Errorf("-addr %s: listening on %s, beyond this machine, needs authentication; set CHATBOT_TOKENS=\"principal=token,...\" "+
			"or -tokens FILE, or listen on a loopback address (-addr 127.0.0.1:8080)", *addr, ln.Addr())
	}
	srv := newHTTPServer(bot.Handler())
	mode := ""
	if bot.Demo() {
		mode = " (DEMO MODE: offline rule-based model; set OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST for a real one)"
	}
	fmt.Fprintf(stdout, "chatbot: serving on %s%s\n", url(ln.Addr()), mode)
	bearer := ""
	if len(tokens) > 0 {
		bearer = " -H 'Authorization: Bearer TOKEN'"
	}
	fmt.Fprintf(stdout, "try: curl -N %s/api/v1/chat -H 'Content-Type: application/json'%s -d '{\"message\": \"Compare our pricing to competitors\"}'\n", url(ln.Addr()), bearer)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		_ = bot.Close(context.WithoutCancel(ctx))
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "chatbot: shutting down, letting requests in flight finish")
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), *drain)
	defer cancel()
	// The server stops accepting while the bot ends the turns no one can
	// answer any more and lets the others finish: both at once, so that
	// their streams end (with an error event for the former) and the
	// server's drain does not wait for them.
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(dctx) }()
	var errs []error
	if err := bot.Close(dctx); err != nil {
		errs = append(errs, err)
	}
	if err := <-shut; err != nil {
		errs = append(errs, fmt.Errorf("draining requests: %w", err))
		_ = srv.Close()
	}
	<-served
	return errors.Join(errs...)
}

// Timeouts of the HTTP server. A request's body has the bot's own
// deadline (chatbot.Config.BodyTimeout, set by its guard before any rule,
// so public and refused requests have it too; a refused request's
// connection closes without waiting for its body) and responses theirs,
// since an SSE stream lasts as long as its turn; ReadTimeout and
// WriteTimeout would cut streams.
var (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
)

// newHTTPServer returns the server of serve: headers within
// readHeaderTimeout, idle keep-alive connections closed after idleTimeout.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: 64 << 10}
}

// loadTokens reads the bearer tokens of the server: guard.LoadTokens of
// the -tokens file and the CHATBOT_TOKENS pairs in env.
func loadTokens(path, env string) (map[string]string, error) {
	return guard.LoadTokens(path, env, "CHATBOT_TOKENS")
}

func url(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func ask(ctx context.Context, hooks graph.Hooks, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chatbot ask", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := common{hooks: hooks}
	c.register(fs)
	conv := fs.String("conversation", "terminal", "conversation id; the same id continues a conversation")
	noInput := fs.Bool("no-input", false, "decline the turn's questions without reading stdin")
	user := fs.String("user", "", `user id, with -cognition ("local" when empty)`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *user != "" && !c.cognition {
		return errors.New("-user needs -cognition")
	}
	if c.cognition && *user == "" {
		*user = "local"
	}
	question := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if question == "" {
		return errors.New(`ask needs a question: chatbot ask "What is 15% of 240?"`)
	}
	logger := zap.NewNop()
	if c.verbose {
		logger = newLogger(stderr, true)
	}
	cfg, err := c.config(logger)
	if err != nil {
		return err
	}
	bot, err := chatbot.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer bot.Close(context.WithoutCancel(ctx))
	if bot.Demo() {
		fmt.Fprintln(stderr, "[demo mode: offline rule-based model]")
	}
	in := newLines(stdin)
	defer in.close()
	questions := asker{in: in, out: stderr, echo: !interactive(stdin), noInput: *noInput}
	p := progress{w: stderr}
	answering := false
	for ev, err := range bot.Chat(ctx, chatbot.Request{ConversationID: *conv, UserID: *user, Message: question}) {
		if err != nil {
			p.clear()
			if ctx.Err() != nil {
				return errors.New("ask: interrupted; the turn was cancelled")
			}
			return err
		}
		switch pl := ev.Payload.(type) {
		case chatevent.ResponseChunk:
			if !answering {
				p.clear()
				answering = true
			}
			fmt.Fprint(stdout, pl.Content)
		case chatevent.DirectResponse:
			// An operator answers the user itself (the seed's
			// direct_response): its text is the answer.
			p.clear()
			answering = true
			fmt.Fprint(stdout, pl.Content)
		case chatevent.DirectResponseChunk:
			p.clear()
			answering = true
			fmt.Fprint(stdout, pl.Content)
		case chatevent.ClarifyRequest:
			fmt.Fprintln(stdout)
		case chatevent.ResponseDone:
			fmt.Fprintln(stdout)
		case chatevent.TokenUsage:
			defer fmt.Fprintf(stderr, "[%d tokens: %d in, %d out]\n", pl.Total(), pl.InputTokens, pl.OutputTokens)
		case chatevent.ElicitationRequest:
			p.clear()
			answer, err := questions.ask(ctx, pl)
			if err != nil {
				// Ctrl-C: leaving the loop cancels the turn.
				return errors.New("ask: interrupted while asking; the turn was cancelled")
			}
			// The same call as POST /api/v1/elicitation/respond.
			if err := bot.Respond(ctx, answer); err != nil {
				// The question was withdrawn meanwhile (its tool gave up
				// or timed out): the turn goes on without the answer.
				fmt.Fprintf(stderr, "  ! the answer was not delivered: %v\n", err)
			}
		default:
			p.show(ev)
		}
	}
	if ctx.Err() != nil {
		return errors.New("ask: interrupted; the turn was cancelled")
	}
	if c.cognition {
		return waitLearning(ctx, bot.Cognition(), stderr)
	}
	return nil
}

// learningWait bounds how long ask waits for the learning of its turn.
var learningWait = 10 * time.Second

// waitLearning waits, up to learningWait, for cognition to learn from the
// turn, so that the next ask knows what this one taught. If the learning
// does not finish in time (a slow model) or ctx ends, it says so on
// stderr and stops it: the turn is then not remembered, and ask still
// exits.
func waitLearning(ctx context.Context, svc *cognition.Service, stderr io.Writer) error {
	wctx, cancel := context.WithTimeout(ctx, learningWait)
	defer cancel()
	if err := svc.Flush(wctx); err == nil {
		return nil
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "[interrupted while learning from this turn; it will not be remembered]")
	} else {
		fmt.Fprintf(stderr, "[learning from this turn did not finish within %v; it will not be remembered]\n", learningWait)
	}
	// Close with an ended context stops the learning instead of waiting
	// for it; the bot's own Close then finds the service closed.
	stopped, stop := context.WithCancel(ctx)
	stop()
	svc.Close(stopped)
	return nil
}

// progress prints what the bot is doing, one line per step, with a bar
// for tools that report progress.
type progress struct {
	w       io.Writer
	barOpen bool
}

func (p *progress) clear() {
	if p.barOpen {
		fmt.Fprintln(p.w)
		p.barOpen = false
	}
}

func (p *progress) line(format string, args ...any) {
	p.clear()
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *progress) show(ev event.Event) {
	switch pl := ev.Payload.(type) {
	case chatevent.SupervisorThinking:
		p.line("… %s", pl.Message)
	case chatevent.SupervisorDecided:
		p.line("→ %s: %s", pl.Action, pl.Message)
	case chatevent.ToolStart:
		p.line("⚙ %s", pl.Tool)
	case chatevent.ToolProgress:
		const width = 20
		n := int(pl.Progress*width + 0.5)
		n = max(0, min(width, n))
		fmt.Fprintf(p.w, "\r  %s [%s%s] %3.0f%% %-40s", pl.Tool, strings.Repeat("#", n), strings.Repeat(".", width-n), pl.Progress*100, pl.Message)
		p.barOpen = true
	case chatevent.ToolComplete:
		p.line("✓ %s", pl.Tool)
	case chatevent.ToolError:
		p.line("✗ %s: %s", pl.Tool, pl.Error)
	case chatevent.WorkflowCreated:
		p.line("▤ plan of %d steps: %s", pl.Steps, pl.Goal)
	case chatevent.WorkflowStepStart:
		p.line("  ▶ step %d: %s", pl.Step, pl.Name)
	case chatevent.WorkflowStepComplete:
		status := "done"
		if pl.Status != "" {
			status = pl.Status
		}
		p.line("  ■ step %d %s", pl.Step, status)
	case event.Error:
		p.line("! %s", pl.Message)
	}
}
