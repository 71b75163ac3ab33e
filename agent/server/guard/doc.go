// Package guard protects an HTTP API that listens on a network: it
// authenticates each request's principal, serves an unauthenticated API on
// loopback only, refuses DNS-rebinding and cross-site requests, bounds
// request bodies and how long they take to arrive, bounds each principal's
// concurrent streams, and gives the http.Server its timeouts.
//
// A [Guard] is made from a [Config] by [New]. [Guard.Handler] wraps the
// API's handler; [Guard.Server] returns an *http.Server with that handler
// and read-header and idle timeouts; [Guard.Listen] refuses to listen
// beyond loopback without authentication:
//
//	g, err := guard.New(guard.Config{Tokens: map[string]string{token: "alice"}})
//	ln, err := g.Listen(ctx, ":8080")
//	err = g.Server(mux).Serve(ln)
//
// # The rules, in the order they apply
//
//  1. Host. Loopback names (localhost, 127.0.0.1, ::1) are served, and
//     with Config.AllowedHosts those host names too; without them, any
//     host when authentication is on. A page whose name was rebound to
//     127.0.0.1 sends its own name and gets 421. Without authentication
//     the guard means to serve this machine only: [New] refuses
//     AllowedHosts beyond loopback, [Guard.Listen] an address beyond it,
//     and a request that shows signs of coming from beyond gets 403: a
//     peer address that is not loopback, or a header a proxy adds
//     ([ProxyHeaders], by name and by a rule on names: a reverse proxy in
//     front relays anyone's requests). With Config.TrustLocalProxy a
//     request whose client addresses are all loopback is served (a local
//     development proxy); the client can forge them through a proxy that
//     passes its headers on, so it is off by default. A proxy on this
//     machine that adds none of these headers (nginx's plain proxy_pass)
//     is not detected when the client sends none either: an API behind a
//     proxy needs authentication.
//  2. Public requests (Config.Public: a page, a health check) skip the
//     rules below but the body's (rule 6); their principal is not set.
//  3. Origin. A browser request from another origin (scheme, host and
//     port) than the one it is sent to, or than Config.AllowedOrigins,
//     gets 403, as does one without Origin whose Sec-Fetch-Site says
//     cross-site (CSRF); see [Origins.Allowed] for how a request's own
//     scheme is known behind a proxy that ends TLS.
//  4. Principal. A bearer token of Config.Tokens (the scheme "Bearer" in
//     any case, see [BearerToken]; also in Config.APIKeyHeader), else
//     Config.Authenticate; neither answers 401
//     with a WWW-Authenticate challenge. Without both the guard is open:
//     every request is Config.Local's ([LocalPrincipal] by default).
//  5. Content-Type. A request that carries a body must declare one of
//     the accepted media types (application/json by default), else 415: a cross-site form can send text/plain,
//     application/x-www-form-urlencoded and multipart/form-data without
//     asking the server first, so refusing them stops such "simple"
//     requests even from browsers that send no Origin.
//  6. Body. At most Config.MaxBodyBytes are read (the handler's read
//     fails with *http.MaxBytesError), and the body must arrive within
//     Config.BodyTimeout of the request's reaching the guard: the read
//     then fails with a timeout (see [BodyTimedOut]) and the connection
//     closes. Once the body is read to its end, or the handler calls
//     [BodyRead], the deadline is lifted, so a long response (a stream of
//     events) is not cut. The deadline is set before the rules above, for
//     public requests too, so a body that never arrives holds no
//     connection longer than that, whatever answers it.
//  7. Streams. A request for which Config.Streaming reports true counts
//     against its principal's Config.MaxStreams until its handler returns;
//     one more gets 429.
//
// The handler then runs with the principal in the request's context
// ([Principal]). Every response carries headers that keep the API's pages
// out of other sites' frames and stop content sniffing.
//
// The body of a request a rule refuses is not read: the answer (HTTP/1)
// says "Connection: close" and goes out at once, and the connection
// closes after it, without waiting for the rest of the body.
//
// Rejections are *[Error] values whose Unwrap names the rule (ErrHost,
// ErrProxied, ErrOrigin, ErrUnauthenticated, ErrContentType,
// ErrTooManyStreams);
// Config.Reject renders them, by default as JSON {"error", "field"}.
package guard
