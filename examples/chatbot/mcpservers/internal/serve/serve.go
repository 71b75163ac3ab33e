// Package serve runs an MCP server as a command: over stdio by default, or
// over streamable HTTP, until its input ends or it receives SIGINT or
// SIGTERM.
package serve

import (
	"context"
	"crypto/subtle"
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

	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/mcp/stdio"
)

// shutdownGrace bounds how long HTTP shutdown waits for in-flight calls.
const shutdownGrace = 5 * time.Second

// ErrNoToken is what HTTP fails with when Auth requires a token to listen
// on an address other hosts can reach and has none.
var ErrNoToken = errors.New("other hosts can reach this address and no token is set; give a token or listen on a loopback address such as 127.0.0.1:8931")

// Auth is the authentication of HTTP requests.
type Auth struct {
	// Token, when set, is the bearer token every HTTP request must carry
	// in its Authorization header.
	Token string
	// Required refuses to listen on an address other hosts can reach
	// (anything but loopback) without a Token.
	Required bool
}

// Run serves s. With httpAddr empty it speaks MCP over stdin and stdout;
// otherwise it listens on httpAddr (host:port; port 0 picks a free one),
// serves streamable HTTP at /mcp, authenticated by auth, and writes the URL
// to log. It returns nil on a clean stop: end of input, SIGINT or SIGTERM.
func Run(s *server.MCPServer, httpAddr string, auth Auth, log io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if httpAddr == "" {
		// stdio.Serve, not mcp-go's stdio server: it writes a call's
		// progress before the call's result.
		return stdio.Serve(ctx, s, os.Stdin, os.Stdout)
	}
	return HTTP(ctx, s, httpAddr, auth, Limits{}, log)
}

// HTTP serves s over streamable HTTP at /mcp on addr until ctx ends, then
// shuts down gracefully. It writes "serving MCP at URL" to log once it
// listens. Requests without auth's token, when it has one, are refused
// with 401 Unauthorized. The sessions, streams and request bodies clients
// can make it hold are bounded by lim (see [Handler]); an in-memory event
// store, bounded too, keeps messages such as progress notifications from
// being lost when a response stream breaks.
func HTTP(ctx context.Context, s *server.MCPServer, addr string, auth Auth, lim Limits, log io.Writer) error {
	h, err := NewHandler(s, auth, lim)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_ = h.Shutdown(context.WithoutCancel(ctx))
		return fmt.Errorf("serve: listening on %s: %w", addr, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && auth.Required && auth.Token == "" && !tcp.IP.IsLoopback() {
		ln.Close()
		_ = h.Shutdown(context.WithoutCancel(ctx))
		return fmt.Errorf("serve: refusing to serve %s: %w", addr, ErrNoToken)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := h.Server()
	hs.Handler = mux
	fmt.Fprintf(log, "serving MCP at http://%s/mcp\n", ln.Addr())

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		_ = h.Shutdown(sctx)
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err = h.Shutdown(sctx); err != nil {
		// Streams still open after the grace period are cut.
		err = errors.Join(err, hs.Close())
	}
	if serveErr := <-errc; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}

// requireToken passes to next the requests that carry token as a bearer
// token (the scheme in any case), all of them when token is empty. A
// refused request's body is not waited for: the connection closes after
// the 401.
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := guard.BearerToken(r)
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			guard.RefuseBody(w, r)
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
