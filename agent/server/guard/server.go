package guard

import (
	"context"
	"fmt"
	"net"
	"net/http"
)

// Server returns an http.Server serving next behind the guard
// ([Guard.Handler]), with Config.ReadHeaderTimeout, IdleTimeout and
// MaxHeaderBytes. It sets no ReadTimeout or WriteTimeout, which would cut
// long responses (streams of events): request bodies have
// Config.BodyTimeout instead, and responses Config.WriteTimeout.
func (g *Guard) Server(next http.Handler) *http.Server {
	return &http.Server{Handler: g.Handler(next), ReadHeaderTimeout: g.cfg.ReadHeaderTimeout,
		IdleTimeout: g.cfg.IdleTimeout, MaxHeaderBytes: g.cfg.MaxHeaderBytes}
}

// CheckAddr returns an error when an open guard (no Config.Tokens or
// Config.Authenticate) would listen on addr beyond this machine.
func (g *Guard) CheckAddr(addr string) error {
	if g.Open() && !LoopbackAddr(addr) {
		return fmt.Errorf("guard: listening on %q, beyond this machine, needs authentication: set Config.Tokens or Config.Authenticate, "+
			"or listen on loopback only (such as 127.0.0.1:8080)", addr)
	}
	return nil
}

// Listen listens on the TCP address addr, after [Guard.CheckAddr]: an open
// guard refuses to listen beyond loopback, and, since a name such as
// "localhost" may resolve to any address, checks the address it listens
// on too ([LoopbackListener]).
func (g *Guard) Listen(ctx context.Context, addr string) (net.Listener, error) {
	if err := g.CheckAddr(addr); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if err := g.checkListener(addr, ln); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return ln, nil
}

// checkListener returns an error when an open guard's ln, listening on
// addr, is not on loopback only.
func (g *Guard) checkListener(addr string, ln net.Listener) error {
	if g.Open() && !LoopbackListener(ln) {
		return fmt.Errorf("guard: %q resolved to %s, beyond this machine, which needs authentication: set Config.Tokens or "+
			"Config.Authenticate, or listen on a loopback address (such as 127.0.0.1:8080)", addr, ln.Addr())
	}
	return nil
}
