// Package serve runs an MCP server as a command: over stdio by default, or
// over streamable HTTP, until its input ends or it receives SIGINT or
// SIGTERM.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/mcp/stdio"
)

// shutdownGrace bounds how long HTTP shutdown waits for in-flight calls.
const shutdownGrace = 5 * time.Second

// Run serves s. With httpAddr empty it speaks MCP over stdin and stdout;
// otherwise it listens on httpAddr (host:port; port 0 picks a free one),
// serves streamable HTTP at /mcp and writes the URL to log. It returns nil
// on a clean stop: end of input, SIGINT or SIGTERM.
func Run(s *server.MCPServer, httpAddr string, log io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if httpAddr == "" {
		// stdio.Serve, not mcp-go's stdio server: it writes a call's
		// progress before the call's result.
		return stdio.Serve(ctx, s, os.Stdin, os.Stdout)
	}
	return HTTP(ctx, s, httpAddr, log)
}

// HTTP serves s over streamable HTTP at /mcp on addr until ctx ends, then
// shuts down gracefully. It writes "serving MCP at URL" to log once it
// listens. An in-memory event store keeps progress notifications from being
// lost when a response stream ends.
func HTTP(ctx context.Context, s *server.MCPServer, addr string, log io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: listening on %s: %w", addr, err)
	}
	mcpHTTP := server.NewStreamableHTTPServer(s, server.WithEventStore(server.NewInMemoryEventStore()))
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHTTP)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(log, "serving MCP at http://%s/mcp\n", ln.Addr())

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err = errors.Join(mcpHTTP.Shutdown(sctx), hs.Shutdown(sctx))
	if serveErr := <-errc; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}
