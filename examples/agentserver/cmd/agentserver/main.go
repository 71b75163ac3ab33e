// Command agentserver serves the example graphs of package
// examples/agentserver over LangGraph's Agent Server API on
// 127.0.0.1:2024, the port of LangGraph's dev servers, keeping threads and
// checkpoints in SQLite files:
//
//	go run ./examples/agentserver/cmd/agentserver -dir data
//
// Then, with the official JS client:
//
//	const client = new Client({ apiUrl: "http://127.0.0.1:2024" });
//	for await (const e of client.runs.stream(null, "agent", { input: { messages: [{ role: "user", content: "hi" }] }, streamMode: "messages-tuple" })) console.log(e);
//
// It listens on loopback only, open to anyone on this machine, unless
// API keys are given: from the environment,
// AGENTSERVER_TOKENS="alice=KEY,bob=KEY" (principal=key pairs), or from a
// file, -tokens FILE (one "principal key" pair a line, # comments; the
// file's mode must keep others out, 0600: another is refused); each
// key has at least 16 bytes (guard.MinTokenLen). Clients send a key in
// x-api-key (or Authorization: Bearer KEY). -origin lists the browser
// origins of pages served elsewhere that may call the API ("*", any
// site, needs keys).
//
// With -postgres, threads, runs, event logs and checkpoints are kept in
// PostgreSQL instead, and several instances on one database share the
// work: a client may create a run on one and join its stream, resume it
// by Last-Event-ID or cancel it on another, and a run whose instance died
// is finished by another from its last checkpoint. Two instances:
//
//	go run ./examples/agentserver/cmd/agentserver -addr 127.0.0.1:2024 -postgres postgres://postgres@127.0.0.1:5432/test
//	go run ./examples/agentserver/cmd/agentserver -addr 127.0.0.1:2025 -postgres postgres://postgres@127.0.0.1:5432/test
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
	"slices"
	"syscall"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/examples/agentserver"
	"github.com/agentgraph/agentgraph/examples/internal/cmdflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var lc net.ListenConfig
	listen := func(addr string) (net.Listener, error) { return lc.Listen(ctx, "tcp", addr) }
	if err := run(ctx, os.Args[1:], os.Getenv, listen, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "agentserver:", err)
		}
		os.Exit(1)
	}
}

// tokensEnv is the environment variable of the API keys, principal=key
// pairs.
const tokensEnv = "AGENTSERVER_TOKENS"

// run serves with args (without the program name) until ctx ends; it
// reads the environment with getenv and listens with listen.
func run(ctx context.Context, args []string, getenv func(string) string, listen func(addr string) (net.Listener, error), stderr io.Writer) error {
	fs := flag.NewFlagSet("agentserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:2024", "address to listen on, HOST:PORT; other than loopback it needs -tokens or "+tokensEnv)
	dir := fs.String("dir", "agentserver-data", "directory of the SQLite files, made private to this user (mode 0700, files 0600) unless it holds other files or is a symbolic link (a warning says so)")
	tokensFile := fs.String("tokens", "", `file of API keys clients send in x-api-key, one "principal key" pair a line, mode 0600 (or set `+tokensEnv+`="principal=key,...")`)
	origins := fs.String("origin", "", `comma-separated browser origins allowed besides the API's own; "*" (any site) needs -tokens or `+tokensEnv)
	pg := fs.String("postgres", "", "PostgreSQL DSN: keep threads, runs and checkpoints there instead of -dir, shared by every instance given the same DSN")
	schema := fs.String("schema", "", "PostgreSQL schema of the tables (with -postgres); empty means public")
	natsURL := fs.String("nats", "", "NATS URL (JetStream enabled, with -postgres): instances serve each other's resumable chatbot turns")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("agentserver takes no arguments, got %q", fs.Args())
	}
	keys, err := guard.LoadTokens(*tokensFile, getenv(tokensEnv), tokensEnv)
	if err != nil {
		return err
	}
	for key, who := range keys {
		if len(key) < guard.MinTokenLen {
			return fmt.Errorf("the API key of principal %q has %d bytes; use at least %d random bytes (-tokens or %s)", who, len(key), guard.MinTokenLen, tokensEnv)
		}
	}
	allowed := cmdflag.List(*origins)
	if len(keys) == 0 && !guard.LoopbackAddr(*addr) {
		return fmt.Errorf("-addr %s: serving beyond this machine needs API keys; set %s=\"principal=key,...\" or -tokens FILE "+
			"(keys of at least %d random bytes), or listen on loopback only (-addr 127.0.0.1:2024)", *addr, tokensEnv, guard.MinTokenLen)
	}
	if len(keys) == 0 && slices.Contains(allowed, "*") {
		return fmt.Errorf(`-origin "*": letting any site's pages call the API needs API keys, or any site its user visits could drive this server; `+
			`set %s="principal=key,..." or -tokens FILE, or list the origins of your pages`, tokensEnv)
	}
	cfg := agentserver.Config{Dir: *dir, Postgres: *pg, Schema: *schema}
	cfg.Chatbot.NATS = *natsURL
	// The server, the chatbot and Bos-AI log to stderr: among their
	// warnings, a -dir they could not make private (a directory holding
	// other files, such as ".", or a symbolic link).
	log := newLogger(stderr)
	defer func() { _ = log.Sync() }()
	cfg.Server.Logger, cfg.Chatbot.Logger, cfg.BosAI.Logger = log, log, log
	if len(keys) > 0 {
		if cfg.Server.Authenticate, err = server.APIKeys(keys); err != nil {
			return err
		}
	}
	cfg.Server.AllowedOrigins = allowed
	ln, err := listen(*addr)
	if err != nil {
		return fmt.Errorf("-addr: %w", err)
	}
	if len(keys) == 0 && !guard.LoopbackListener(ln) {
		// A name such as "localhost" may resolve to any address.
		_ = ln.Close()
		return fmt.Errorf("-addr %s: listening on %s, beyond this machine, needs API keys; set %s=\"principal=key,...\" or -tokens FILE, "+
			"or listen on a loopback address (-addr 127.0.0.1:2024)", *addr, ln.Addr(), tokensEnv)
	}
	app, err := agentserver.New(ctx, cfg)
	if err != nil {
		_ = ln.Close()
		return err
	}
	// Request bodies have the server's Config.BodyTimeout and answers its
	// WriteTimeout and StreamWriteTimeout, per write: an http.Server
	// ReadTimeout or WriteTimeout would cut streams and waits.
	hs := &http.Server{Handler: app, ReadHeaderTimeout: guard.DefaultReadHeaderTimeout, IdleTimeout: guard.DefaultIdleTimeout,
		MaxHeaderBytes: guard.DefaultMaxHeaderBytes}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stderr, "agentserver: serving graphs agent, approval, chatbot and bosai on http://%s\n", ln.Addr())
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = errors.Join(err, hs.Shutdown(sctx), app.Close(sctx))
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// newLogger returns a logger writing to w at level info, as the
// chatbot's command does (examples/chatbot/cmd/chatbot).
func newLogger(w io.Writer) *zap.Logger {
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), zapcore.Lock(zapcore.AddSync(w)), zap.InfoLevel))
}
