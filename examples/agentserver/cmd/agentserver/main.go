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
// To listen beyond loopback, set -api-key (clients send it in x-api-key)
// and -origin for browser pages served from elsewhere.
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
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/examples/agentserver"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "agentserver:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:2024", "address to listen on")
	dir := flag.String("dir", "agentserver-data", "directory of the SQLite files")
	key := flag.String("api-key", "", "API key clients must send in x-api-key (required beyond loopback)")
	origins := flag.String("origin", "", "comma-separated browser origins allowed besides loopback pages")
	pg := flag.String("postgres", "", "PostgreSQL DSN: keep threads, runs and checkpoints there instead of -dir, shared by every instance given the same DSN")
	schema := flag.String("schema", "", "PostgreSQL schema of the tables (with -postgres); empty means public")
	natsURL := flag.String("nats", "", "NATS URL (JetStream enabled, with -postgres): instances serve each other's resumable chatbot turns")
	flag.Parse()
	if *key == "" && !guard.LoopbackAddr(*addr) {
		return fmt.Errorf("-addr %s: serving beyond this machine needs an API key; set -api-key, or listen on loopback only (-addr 127.0.0.1:2024)", *addr)
	}
	if *pg == "" {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := agentserver.Config{Dir: *dir, Postgres: *pg, Schema: *schema}
	cfg.Chatbot.NATS = *natsURL
	if *key != "" {
		cfg.Server.Authenticate = server.APIKeys(map[string]string{*key: "default"})
	}
	if *origins != "" {
		cfg.Server.AllowedOrigins = strings.Split(*origins, ",")
	}
	app, err := agentserver.New(ctx, cfg)
	if err != nil {
		return err
	}
	hs := &http.Server{Addr: *addr, Handler: app, ReadHeaderTimeout: guard.DefaultReadHeaderTimeout, IdleTimeout: guard.DefaultIdleTimeout,
		MaxHeaderBytes: guard.DefaultMaxHeaderBytes}
	errc := make(chan error, 1)
	go func() { errc <- hs.ListenAndServe() }()
	fmt.Fprintf(os.Stderr, "agentserver: serving graphs agent, approval, chatbot and bosai on http://%s\n", *addr)
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
