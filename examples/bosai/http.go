package bosai

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent/server/guard"
)

// MaxRequestBytes bounds the body of a request to Handler.
const MaxRequestBytes = 1 << 20

// DefaultMaxAsks is the default of HTTPConfig.MaxAsks.
const DefaultMaxAsks = 4

// DefaultWriteStall is the default of HTTPConfig.WriteStall.
const DefaultWriteStall = 30 * time.Second

// HTTPConfig says who may call [Handler] and how much: the API is served
// behind a guard (package agent/server/guard).
type HTTPConfig struct {
	// Tokens maps bearer tokens (at least guard.MinTokenLen bytes) to the
	// principals they authenticate: requests must send "Authorization:
	// Bearer TOKEN" (401 otherwise). Without tokens every request is
	// guard.LocalPrincipal's and only loopback Host names are served (421
	// otherwise), so that a page elsewhere cannot reach the API through
	// DNS rebinding: listen beyond loopback only with tokens.
	Tokens map[string]string
	// AllowedHosts are the Host names served besides the loopback names;
	// empty means any with tokens, loopback names only without. Names
	// beyond loopback need Tokens.
	AllowedHosts []string
	// AllowedOrigins are the browser origins ("https://app.example.com")
	// whose pages may call the API besides its own; other browser
	// requests get 403.
	AllowedOrigins []string
	// MaxAsks bounds each principal's questions in flight (429 beyond).
	// Zero means DefaultMaxAsks.
	MaxAsks int
	// BodyTimeout bounds how long a request body may take to arrive. Zero
	// means guard.DefaultBodyTimeout.
	BodyTimeout time.Duration
	// WriteStall bounds how long one write of an answer (an event of a
	// stream) may block on a client that does not read; the connection is
	// closed after it. Zero means DefaultWriteStall.
	WriteStall time.Duration
}

// Handler serves Bos-AI over HTTP (the seed's API client layer):
//
//	POST /v1/ask   a Request as JSON
//
// It answers with the Response as JSON or, when the request accepts
// text/event-stream, with a server-sent event per trace event ("trace")
// and the response last ("response"); a failed run ends the stream with an
// "error" event. A request that fails validation (Request.Validate, or
// JSON with unknown fields, or what Bot.CheckUntrusted refuses: a context
// api_base_url the Bot may not call, or any context api_headers) gets 400
// and {"error": "..."}: an HTTP caller cannot choose where the API agent's
// calls go nor the program's headers they carry (see CtxAPIBaseURL and
// CtxAPIHeaders). The model's plan may set only the headers the API docs
// declare (Param.In "header"), never routing or credential headers, and
// the program's api_headers are set after them.
//
// The API is guarded as cfg says: the caller's token (401), the Host
// (421), the Origin of browser requests (403), the body's media type
// (application/json, else 415), size (MaxRequestBytes, else 413) and arrival
// (HTTPConfig.BodyTimeout), and the questions in flight per principal
// (429). An error names the HTTPConfig field that is invalid.
func Handler(b *Bot, cfg HTTPConfig) (http.Handler, error) {
	g, err := guard.New(guard.Config{
		Tokens:         cfg.Tokens,
		Realm:          "bosai",
		AllowedHosts:   cfg.AllowedHosts,
		AllowedOrigins: cfg.AllowedOrigins,
		MaxBodyBytes:   MaxRequestBytes,
		BodyTimeout:    cfg.BodyTimeout,
		Streaming:      func(r *http.Request) bool { return r.Method == http.MethodPost },
		MaxStreams:     cmp.Or(cfg.MaxAsks, DefaultMaxAsks),
		Reject:         reject(cmp.Or(cfg.MaxAsks, DefaultMaxAsks)),
	})
	if err != nil {
		return nil, fmt.Errorf("bosai: HTTPConfig.%s", strings.TrimPrefix(err.Error(), "guard: Config."))
	}
	if cfg.WriteStall < 0 {
		return nil, fmt.Errorf("bosai: HTTPConfig.WriteStall is %s; use 0 for DefaultWriteStall or a positive bound", cfg.WriteStall)
	}
	stall := cmp.Or(cfg.WriteStall, DefaultWriteStall)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/ask", func(w http.ResponseWriter, r *http.Request) {
		dec := json.NewDecoder(r.Body) // bounded by the guard
		dec.DisallowUnknownFields()
		var req Request
		if err := dec.Decode(&req); err != nil {
			code := http.StatusBadRequest
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				code, err = http.StatusRequestEntityTooLarge, fmt.Errorf("over %d bytes (MaxRequestBytes); send a shorter request", tooBig.Limit)
			}
			writeError(w, code, fmt.Errorf("request body: %w", err))
			return
		}
		req = req.Normalize()
		if err := b.CheckUntrusted(req); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		if r.Header.Get("Accept") == "text/event-stream" {
			serveSSE(w, r, b, req, stall)
			return
		}
		resp, err := b.Ask(r.Context(), req)
		if err != nil {
			code := http.StatusInternalServerError
			if errors.Is(err, ErrClosed) {
				code = http.StatusServiceUnavailable
			}
			writeError(w, code, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(stall))
		json.NewEncoder(w).Encode(resp)
	})
	return g.Handler(mux), nil
}

// reject answers a request the guard refused, naming the HTTPConfig field
// that changes the rule.
func reject(maxAsks int) func(http.ResponseWriter, *http.Request, *guard.Error) {
	return func(w http.ResponseWriter, r *http.Request, e *guard.Error) {
		var msg string
		switch {
		case errors.Is(e, guard.ErrHost):
			msg = fmt.Sprintf("bosai: Host %q is not served; without tokens only loopback names are (localhost, 127.0.0.1): "+
				"set HTTPConfig.Tokens (bosai -serve with BOSAI_TOKENS), and list other names in HTTPConfig.AllowedHosts", r.Host)
		case errors.Is(e, guard.ErrOrigin):
			msg = fmt.Sprintf("bosai: cross-origin request from %q refused; add the origin to HTTPConfig.AllowedOrigins", r.Header.Get("Origin"))
		case errors.Is(e, guard.ErrUnauthenticated):
			msg = "bosai: not authenticated; send the header Authorization: Bearer <token>"
		case errors.Is(e, guard.ErrTooManyStreams):
			msg = fmt.Sprintf("bosai: %d questions of yours are in flight (HTTPConfig.MaxAsks); wait for one to finish", maxAsks)
		default:
			msg = "bosai: " + strings.TrimPrefix(e.Message, "guard: ")
		}
		writeError(w, e.Status, errors.New(msg))
	}
}

func writeError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// serveSSE streams the run of req as server-sent events. Each write may
// block for stall (a write deadline set before it), so that a client that
// stops reading does not hold the handler, and its principal's place,
// forever.
func serveSSE(w http.ResponseWriter, r *http.Request, b *Bot, req Request, stall time.Duration) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	rc := http.NewResponseController(w)
	send := func(event string, v any) bool {
		data, err := json.Marshal(v)
		if err != nil {
			return false
		}
		_ = rc.SetWriteDeadline(time.Now().Add(stall))
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		// Lifted after the write: over HTTP/2 a deadline left in place
		// resets a stream quiet for longer than stall.
		_ = rc.SetWriteDeadline(time.Time{})
		return true
	}
	for ev, err := range b.Run(r.Context(), req) {
		if err != nil {
			send("error", map[string]string{"error": err.Error()})
			return
		}
		if ev.Trace != nil && !send("trace", ev.Trace) {
			return
		}
		if ev.Response != nil {
			send("response", ev.Response)
		}
	}
}
