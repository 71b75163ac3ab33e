package swarm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Defaults of HTTPConfig.
const (
	DefaultMaxBody       = 64 << 10          // request body bytes
	DefaultRunTimeout    = 10 * time.Minute  // per task
	DefaultRunsPerCaller = 4                 // tasks in flight per principal
	DefaultWriteStall    = 30 * time.Second  // per write of a response
	MinTokenLen          = guard.MinTokenLen // bytes of a bearer token
)

// LocalPrincipal owns every task when the API has no tokens (a loopback
// service).
const LocalPrincipal = guard.LocalPrincipal

// HTTPConfig configures Swarm.Handler.
type HTTPConfig struct {
	// Tokens maps bearer tokens (at least MinTokenLen bytes) to the
	// principals they authenticate. Without tokens every request is
	// LocalPrincipal's and only loopback Host names are served, so a page
	// elsewhere cannot reach the API through DNS rebinding; serve beyond
	// loopback only with tokens.
	Tokens map[string]string
	// AllowedOrigins are the browser origins (such as
	// "https://app.example.com") whose pages may call the API; a request
	// with another Origin header is refused. Requests without one (curl,
	// servers) are not affected.
	AllowedOrigins []string
	// MaxBody bounds request bodies in bytes. Zero means DefaultMaxBody.
	MaxBody int64
	// RunTimeout bounds each task. Zero means DefaultRunTimeout.
	RunTimeout time.Duration
	// RunsPerPrincipal bounds each principal's tasks in flight. Zero means
	// DefaultRunsPerCaller.
	RunsPerPrincipal int
	// WriteStall bounds how long one write of a response (an event of a
	// stream) may block on a client that does not read; the connection is
	// closed after it, and the task, which runs under the request, is
	// cancelled. Zero means DefaultWriteStall.
	WriteStall time.Duration
}

// Handler returns the swarm's web API:
//
//	POST /tasks              {"task": "..."} runs a task; with "Accept:
//	                         text/event-stream" its events stream as
//	                         server-sent events (one per Event, named by its
//	                         kind, the last "done" with the Outcome, or
//	                         "error"), else the Outcome is returned as JSON
//	POST /tasks/{id}/resume  resumes the task's thread, the same way
//	GET  /tasks/{id}         the task's saved state as an Outcome
//
// A task's id is its thread; it belongs to the principal that started it
// (the id carries the principal, so ownership survives a restart) and
// another principal gets 404. Errors are JSON {"error", "field"}; a
// request that fails validation names the field.
func (w *Swarm) Handler(cfg HTTPConfig) (http.Handler, error) {
	h := &api{w: w, cfg: cfg}
	if h.cfg.MaxBody <= 0 {
		h.cfg.MaxBody = DefaultMaxBody
	}
	if h.cfg.RunTimeout <= 0 {
		h.cfg.RunTimeout = DefaultRunTimeout
	}
	if h.cfg.RunsPerPrincipal <= 0 {
		h.cfg.RunsPerPrincipal = DefaultRunsPerCaller
	}
	if h.cfg.WriteStall <= 0 {
		h.cfg.WriteStall = DefaultWriteStall
	}
	g, err := guard.New(guard.Config{
		Tokens: cfg.Tokens,
		CheckPrincipal: func(p string) error {
			if !principalRe.MatchString(p) {
				return fmt.Errorf("principal %q must be 1 to 64 letters, digits, '_' or '-'", p)
			}
			return nil
		},
		Local:          LocalPrincipal,
		Realm:          "swarm",
		AllowedOrigins: cfg.AllowedOrigins,
		MaxBodyBytes:   h.cfg.MaxBody,
		// Every POST runs a task, to its end.
		Streaming:  func(r *http.Request) bool { return r.Method == http.MethodPost },
		MaxStreams: h.cfg.RunsPerPrincipal,
		Reject:     h.reject,
	})
	if err != nil {
		return nil, fmt.Errorf("swarm: HTTPConfig.%s", strings.TrimPrefix(err.Error(), "guard: Config."))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /tasks", h.start)
	mux.HandleFunc("POST /tasks/{id}/resume", h.resume)
	mux.HandleFunc("GET /tasks/{id}", h.get)
	return g.Handler(mux), nil
}

var (
	principalRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	threadRe    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9_-]{1,64}$`)
)

type api struct {
	w   *Swarm
	cfg HTTPConfig
}

// apiError is the JSON body of an error.
type apiError struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func writeJSON(rw http.ResponseWriter, code int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	rw.WriteHeader(code)
	_ = json.NewEncoder(rw).Encode(v)
}

func fail(rw http.ResponseWriter, code int, field, msg string) {
	writeJSON(rw, code, apiError{Error: msg, Field: field})
}

// reject answers a request the guard refused (see guard.Config): a
// foreign Host of a tokenless API, a request to it from beyond this
// machine or through a proxy, or another Origin (403), no token (401), a
// body that is not JSON (415), or the principal's tasks in flight at
// HTTPConfig.RunsPerPrincipal (429). A rule this switch does not know
// keeps the guard's status and message.
func (h *api) reject(rw http.ResponseWriter, r *http.Request, e *guard.Error) {
	switch {
	case errors.Is(e, guard.ErrHost):
		fail(rw, http.StatusForbidden, "", "this API has no tokens and serves loopback host names only; configure HTTPConfig.Tokens to serve "+r.Host)
	case errors.Is(e, guard.ErrProxied):
		fail(rw, http.StatusForbidden, e.Field, fmt.Sprintf("this API has no tokens and serves this machine only; the request came from beyond it "+
			"or through a proxy (%s); configure HTTPConfig.Tokens (swarm -token) to serve it", e.Field))
	case errors.Is(e, guard.ErrOrigin):
		fail(rw, http.StatusForbidden, "", fmt.Sprintf("origin %q may not call this API; add it to HTTPConfig.AllowedOrigins", r.Header.Get("Origin")))
	case errors.Is(e, guard.ErrUnauthenticated):
		fail(rw, http.StatusUnauthorized, "", "not authenticated; send the header Authorization: Bearer <token>")
	case errors.Is(e, guard.ErrTooManyStreams):
		rw.Header().Set("Retry-After", "5")
		fail(rw, http.StatusTooManyRequests, "", fmt.Sprintf("%d tasks of yours are running, the limit; wait for one to finish", h.cfg.RunsPerPrincipal))
	case errors.Is(e, guard.ErrContentType):
		fail(rw, http.StatusUnsupportedMediaType, "", "send the task as JSON with Content-Type: application/json")
	default:
		fail(rw, e.Status, e.Field, strings.TrimPrefix(e.Message, "guard: "))
	}
}

// TaskRequest is the body of POST /tasks.
type TaskRequest struct {
	// Task is what the swarm should do: 1 to MaxTaskLen bytes.
	Task string `json:"task"`
}

func (h *api) start(rw http.ResponseWriter, r *http.Request) {
	var req TaskRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &tooBig):
			fail(rw, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("the body is over %d bytes", h.cfg.MaxBody))
		case errors.As(err, &typeErr):
			fail(rw, http.StatusBadRequest, typeErr.Field, fmt.Sprintf("%s must be a %s", typeErr.Field, typeErr.Type))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			fail(rw, http.StatusBadRequest, f, fmt.Sprintf("unknown field %q; send {\"task\": \"...\"}", f))
		default:
			fail(rw, http.StatusBadRequest, "", "the body is not a JSON object: "+err.Error())
		}
		return
	}
	task := strings.Join(strings.Fields(req.Task), " ")
	switch {
	case task == "":
		fail(rw, http.StatusBadRequest, "task", "task is required: say what the swarm should do")
		return
	case len(task) > MaxTaskLen:
		fail(rw, http.StatusBadRequest, "task", fmt.Sprintf("task is %d bytes; the limit is %d", len(task), MaxTaskLen))
		return
	}
	principal := guard.Principal(r.Context())
	h.run(rw, r, principal+"."+checkpoint.NewID(), &State{Request: task})
}

// task returns the id and the state of the task the request's path names,
// or answers 404 and false when the task is not the principal's or does
// not exist.
func (h *api) task(rw http.ResponseWriter, r *http.Request) (string, graph.StateSnapshot[State], bool) {
	id := r.PathValue("id")
	principal := guard.Principal(r.Context())
	if threadRe.MatchString(id) && strings.HasPrefix(id, principal+".") {
		snap, err := h.w.Graph().Thread(id).State(r.Context())
		if err == nil && snap.Values.Request != "" {
			return id, snap, true
		}
	}
	fail(rw, http.StatusNotFound, "id", fmt.Sprintf("no task %q of yours", id))
	return "", graph.StateSnapshot[State]{}, false
}

func (h *api) get(rw http.ResponseWriter, r *http.Request) {
	id, snap, ok := h.task(rw, r)
	if !ok {
		return
	}
	ev := done(id, snap.Values)
	writeJSON(rw, http.StatusOK, struct {
		*Outcome
		Finished bool `json:"finished"`
	}{ev.Outcome, len(snap.Next) == 0})
}

func (h *api) resume(rw http.ResponseWriter, r *http.Request) {
	id, snap, ok := h.task(rw, r)
	if !ok {
		return
	}
	if len(snap.Next) == 0 {
		h.reply(rw, r, func(yield func(Event, error) bool) { yield(done(id, snap.Values), nil) })
		return
	}
	h.run(rw, r, id, nil) // reads the state again, and runs on from it only
}

// run runs the task within the run timeout (the guard bounds each
// principal's tasks in flight); a nil input resumes it (see Swarm.stream).
func (h *api) run(rw http.ResponseWriter, r *http.Request, thread string, input *State) {
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.RunTimeout)
	defer cancel()
	h.reply(rw, r.WithContext(ctx), func(yield func(Event, error) bool) { h.w.stream(ctx, thread, input, yield) })
}

// reply streams the events as SSE, or answers with the outcome as JSON.
// Each write may block for HTTPConfig.WriteStall (a write deadline set
// before it), so that a client that stops reading does not hold the
// handler, and its principal's place, forever. The deadline is lifted
// after each event: over HTTP/2 one left in place resets a stream quiet
// for longer than WriteStall.
func (h *api) reply(rw http.ResponseWriter, r *http.Request, seq func(func(Event, error) bool)) {
	rc := http.NewResponseController(rw)
	stall := func() { _ = rc.SetWriteDeadline(time.Now().Add(h.cfg.WriteStall)) }
	unstall := func() { _ = rc.SetWriteDeadline(time.Time{}) }
	sse := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	flusher, canFlush := rw.(http.Flusher)
	if sse && canFlush {
		rw.Header().Set("Content-Type", "text/event-stream")
		rw.Header().Set("Cache-Control", "no-store")
		rw.Header().Set("X-Content-Type-Options", "nosniff")
		rw.WriteHeader(http.StatusOK)
		for ev, err := range seq {
			if err != nil {
				b, _ := json.Marshal(apiError{Error: err.Error()})
				stall()
				fmt.Fprintf(rw, "event: error\ndata: %s\n\n", b)
				flusher.Flush()
				return
			}
			b, err := json.Marshal(ev)
			if err != nil {
				continue
			}
			stall()
			if _, err := fmt.Fprintf(rw, "event: %s\nid: %s\ndata: %s\n\n", ev.Kind, ev.Thread, b); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
			unstall()
		}
		return
	}
	// The answer is written once the run ends, and its write is bounded
	// then: a deadline set during the run would end it over HTTP/2.
	for ev, err := range seq {
		if err != nil {
			code := http.StatusInternalServerError
			var me *ModelError
			switch {
			case errors.As(err, &me):
				code = http.StatusBadGateway
			case errors.Is(err, context.DeadlineExceeded):
				code = http.StatusGatewayTimeout
			case errors.Is(err, ErrClosed):
				code = http.StatusServiceUnavailable
			}
			stall()
			writeJSON(rw, code, struct {
				apiError
				Thread string `json:"thread,omitempty"`
			}{apiError{Error: err.Error()}, ev.Thread})
			return
		}
		if ev.Kind == EventDone {
			stall()
			writeJSON(rw, http.StatusOK, ev.Outcome)
			return
		}
	}
	stall()
	fail(rw, http.StatusInternalServerError, "", "the run ended without an outcome")
}
