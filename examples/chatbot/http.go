package chatbot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// Handler returns the bot's HTTP API:
//
//	GET    /                                      the chat page
//	POST   /api/v1/chat                           one turn, as Server-Sent Events
//	GET    /api/v1/chat/stream/{request_id}       a resumable turn's events, after Last-Event-ID
//	POST   /api/v1/chat/sync                      one turn, as one JSON answer
//	GET    /api/v1/chat/{conversation_id}/history the conversation's messages
//	DELETE /api/v1/chat/{conversation_id}         delete a conversation: cancel its turns, delete its messages and its list entry
//	GET    /api/v1/tools                          the tools the bot can call
//	GET    /health                                status, version, demo mode, stores; MCP servers and cognition's learning to authenticated callers
//	POST   /api/v1/elicitation/respond            answer a tool's question
//	GET    /api/v1/elicitation/pending            the questions waiting for an answer
//	DELETE /api/v1/elicitation/{id}               decline a question
//	POST   /api/v1/documents                      upload a document (202; processed in the background)
//	GET    /api/v1/documents/{conversation_id}    the conversation's documents, with status and summary
//	GET    /api/v1/documents/{conversation_id}/{document_id}[/status] one document
//	DELETE /api/v1/documents/{conversation_id}/{document_id}          delete a document
//	GET    /api/v1/users/{user_id}/profile        what cognition learned about a user (404 when cognition is off)
//	DELETE /api/v1/users/{user_id}                forget a user: profile and memories
//
// Every /api/ request is authenticated (Config.Tokens,
// Config.Authenticate; 401 without credentials) unless the bot has no
// authentication, when it is LocalPrincipal's and only loopback Host
// names are served. A principal sees only its own conversations, streams,
// questions, documents and users: another's ids get 404 (they name
// nothing of the caller's). Browser requests from another origin get 403
// (Config.AllowedOrigins), POST bodies must be application/json
// (multipart/form-data for documents) and arrive within
// Config.BodyTimeout, a principal holds at most Config.MaxStreams
// chat streams open, and it keeps at most Config.MaxConversations
// conversations of at most Config.MaxConversationTurns turns (a turn
// beyond gets 429 naming the setting; DELETE /api/v1/chat/{conversation_id}
// makes room). Internal failures are answered with a generic
// message and a request_id under which the server logs the details.
//
// Chat requests are JSON objects {"message", "conversation_id"?,
// "request_id"?, "user_id"?, "model"?, "resumable"?}; invalid ones get 400
// with {"error", "field"}. A client that disconnects cancels its turn, unless
// the turn was sent with "resumable": true: then the turn runs on (up to
// Config.TurnTimeout) and the client continues it with
// GET /api/v1/chat/stream/{request_id} and a Last-Event-ID header, until
// Config.ResumeLinger after the turn ends. Event ids are the events'
// sequence numbers, the same on the POST response and on resumption.
func (b *Bot) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", servePage)
	mux.HandleFunc("POST /api/v1/chat", b.serveChat)
	mux.HandleFunc("POST /api/v1/chat/sync", b.serveSync)
	// GET /api/v1/chat/stream/{request_id} and
	// GET /api/v1/chat/{conversation_id}/history overlap at
	// /api/v1/chat/stream/history, which net/http refuses to register as
	// two patterns: one pattern takes both, and that path is the history of
	// conversation "stream" (no request id may be "history").
	mux.HandleFunc("GET /api/v1/chat/{first}/{second}", func(w http.ResponseWriter, r *http.Request) {
		first, second := r.PathValue("first"), r.PathValue("second")
		switch {
		case second == "history":
			r.SetPathValue("conversation_id", first)
			b.serveHistory(w, r)
		case first == "stream":
			// The stream's own check answers plain text; the API answers
			// JSON naming the field, here and on another instance alike.
			if !validLastEventID(r) {
				b.writeError(w, r, &RequestError{Field: "Last-Event-ID", Reason: "must be an event id of the stream (a sequence number)"})
				return
			}
			r.SetPathValue("request_id", second)
			b.serveResume(w, r)
		default:
			http.NotFound(w, r)
		}
	})
	mux.HandleFunc("DELETE /api/v1/chat/stream/{request_id}", b.serveStop)
	mux.HandleFunc("DELETE /api/v1/chat/{conversation_id}", b.serveDeleteConversation)
	mux.HandleFunc("GET /api/v1/conversations", b.serveConversations)
	mux.HandleFunc("GET /api/v1/tools", b.serveTools)
	mux.HandleFunc("GET /health", b.serveHealth)
	mux.HandleFunc("POST /api/v1/elicitation/respond", b.serveRespond)
	mux.HandleFunc("GET /api/v1/elicitation/pending", b.servePending)
	mux.HandleFunc("DELETE /api/v1/elicitation/{id}", b.serveDecline)
	b.documentRoutes(mux)
	b.userRoutes(mux)
	return b.guard.Handler(mux)
}

// validLastEventID reports whether a resumption's Last-Event-ID header
// (or lastEventId query parameter), when it has one, is a sequence number.
func validLastEventID(r *http.Request) bool {
	_, ok := lastEventID(r)
	return ok
}

// lastEventID returns a resumption's Last-Event-ID header (or lastEventId
// query parameter) as a sequence number, 0 when it has none; false when
// it is not one.
func lastEventID(r *http.Request) (uint64, bool) {
	v := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if v == "" {
		v = strings.TrimSpace(r.URL.Query().Get("lastEventId"))
	}
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}

// apiError is the JSON body of every error response.
type apiError struct {
	Error     string `json:"error"`
	Field     string `json:"field,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes err as the API's error response. Errors the client can
// act on say what is wrong; any other (a store, a model, a bug) is logged
// with its details under the request's id, and the client gets a generic
// message with that id.
func (b *Bot) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var re *RequestError
	switch {
	case errors.As(err, &re):
		writeJSON(w, http.StatusBadRequest, apiError{Error: re.Error(), Field: re.Field})
	case errors.Is(err, ErrClosed), errors.Is(err, ErrBusy):
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: err.Error()})
	case errors.Is(err, ErrConversationLimit):
		writeJSON(w, http.StatusTooManyRequests, apiError{Error: err.Error(), Field: "conversation_id"})
	case errors.Is(err, errTooManyResumable):
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, apiError{Error: err.Error()})
	case errors.As(err, new(*bodyTimeoutError)):
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusRequestTimeout, apiError{Error: err.Error(), Field: "body"})
	case errors.Is(err, ErrUnknownElicitation), errors.Is(err, ErrNoCognition), errors.Is(err, ErrUnknownUser),
		errors.Is(err, ErrUnknownConversation):
		writeJSON(w, http.StatusNotFound, apiError{Error: err.Error()})
	case errors.Is(err, ErrTurnEnded):
		writeJSON(w, http.StatusConflict, apiError{Error: err.Error(), Field: "request_id"})
	case errors.Is(err, ErrUnknownStream):
		writeJSON(w, http.StatusNotFound, apiError{Error: err.Error(), Field: "request_id"})
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The client went away: not a failure of the server's, and no
		// one is left to read an answer.
		b.log.Debug("chatbot: client went away before the answer", zap.String("request_id", w.Header().Get("X-Request-ID")),
			zap.String("method", r.Method), zap.String("path", r.URL.Path))
	default:
		id := w.Header().Get("X-Request-ID")
		if id == "" {
			id = "http-" + uuid.NewString()
			w.Header().Set("X-Request-ID", id)
		}
		b.log.Error("chatbot: request failed", zap.String("request_id", id), zap.String("method", r.Method),
			zap.String("path", r.URL.Path), zap.Error(err))
		writeJSON(w, http.StatusInternalServerError, apiError{Error: internalMessage(id), RequestID: id})
	}
}

// internalMessage is what a client is told of a failure that is not its
// doing.
func internalMessage(requestID string) string {
	return "chatbot: internal error; the server's log has the details under request_id " + requestID
}

// publicError is the message and code of a failed turn's error event:
// err's own message when it is one the client can act on, or a generic
// one (the details are in the log).
func publicError(err error, requestID string) (msg, code string) {
	var re *RequestError
	switch {
	case errors.Is(err, ErrClosed):
		return err.Error(), "shutting_down"
	case errors.Is(err, ErrStopped):
		return err.Error(), "cancelled"
	case errors.Is(err, ErrConversationLimit):
		return err.Error(), "conversation_limit"
	case errors.Is(err, ErrUnknownConversation):
		return err.Error(), "conversation_deleted" // DeleteConversation cancelled the turn
	case errors.As(err, &re), errors.Is(err, ErrBusy):
		return err.Error(), "turn_failed"
	case errors.Is(err, context.DeadlineExceeded):
		return "chatbot: the turn took longer than its time limit (Config.TurnTimeout) and was stopped", "turn_timeout"
	}
	return internalMessage(requestID), "turn_failed"
}

// decode reads a JSON body of at most MaxBodyBytes into v, rejecting
// unknown fields, keys sent twice or spelled in another case than
// documented, and numbers not every client holds alike (see [checkKeys]).
func (b *Bot) decode(w http.ResponseWriter, r *http.Request, v any) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, b.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case bodyTimedOut(err):
			return &bodyTimeoutError{limit: b.cfg.BodyTimeout}
		case errors.As(err, &tooBig):
			return &RequestError{Field: "body", Reason: fmt.Sprintf("is larger than %d bytes", tooBig.Limit)}
		default:
			return &RequestError{Field: "body", Reason: "could not be read: " + err.Error()}
		}
	}
	bodyRead(w)
	if err := checkKeys(data, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr):
			return typeError(typeErr)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return &RequestError{Field: clip(f, maxQuoted), Reason: "is not a known field"}
		case errors.Is(err, io.EOF):
			return &RequestError{Field: "body", Reason: "is empty; send a JSON object"}
		default:
			return &RequestError{Field: "body", Reason: "is not valid JSON: " + clip(err.Error(), 2*maxQuoted)}
		}
	}
	if dec.More() {
		return &RequestError{Field: "body", Reason: "holds more than one JSON value"}
	}
	return nil
}

// typeError names the field of a JSON value of the wrong type as the
// client spells it: "body" for the whole body, without the Go names of
// embedded structs encoding/json puts in the path ("Response.content"
// is content), and the type in JSON's words.
func typeError(e *json.UnmarshalTypeError) *RequestError {
	var path []string
	segs := strings.Split(e.Field, ".")
	for i, seg := range segs {
		// The API's keys are snake_case: a capitalised segment before the
		// last is an embedded struct's Go name.
		if i < len(segs)-1 && seg != "" && unicode.IsUpper(rune(seg[0])) {
			continue
		}
		path = append(path, seg)
	}
	field := strings.Join(path, ".")
	if field == "" {
		field = "body"
	}
	kind := "value of another type"
	switch e.Type.Kind() {
	case reflect.Struct, reflect.Map:
		kind = "object"
	case reflect.Slice, reflect.Array:
		kind = "array"
	case reflect.String:
		kind = "string"
	case reflect.Bool:
		kind = "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		kind = "integer"
	case reflect.Float32, reflect.Float64:
		kind = "number"
	}
	return &RequestError{Field: clip(field, maxQuoted), Reason: "must be a JSON " + kind + ", not " + clip(e.Value, maxQuoted)}
}

func (b *Bot) chatRequest(w http.ResponseWriter, r *http.Request) (Request, error) {
	var req Request
	if err := b.decode(w, r, &req); err != nil {
		return req, err
	}
	return b.normalize(req)
}

// SyncResponse is the answer of POST /api/v1/chat/sync.
type SyncResponse struct {
	RequestID      string      `json:"request_id"`
	ConversationID string      `json:"conversation_id"`
	Response       string      `json:"response"`
	Action         string      `json:"action,omitempty"`
	Clarify        bool        `json:"clarify,omitempty"`
	Usage          model.Usage `json:"usage"`
	TotalTokens    int         `json:"total_tokens"`
}

func (b *Bot) serveSync(w http.ResponseWriter, r *http.Request) {
	req, err := b.chatRequest(w, r)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	w.Header().Set("X-Request-ID", req.RequestID)
	out := SyncResponse{RequestID: req.RequestID, ConversationID: req.ConversationID}
	var sb strings.Builder
	for ev, err := range b.Chat(r.Context(), req) {
		if err != nil {
			b.writeError(w, r, err)
			return
		}
		switch p := ev.Payload.(type) {
		case chatevent.ResponseChunk:
			sb.WriteString(p.Content)
		case chatevent.SupervisorDecided:
			out.Action = p.Action
		case chatevent.ClarifyRequest:
			out.Clarify = true
		case chatevent.TokenUsage:
			out.Usage = p.Usage
			out.TotalTokens = p.Total()
		}
	}
	out.Response = sb.String()
	writeJSON(w, http.StatusOK, out)
}

// HistoryMessage is one message of GET /api/v1/chat/{id}/history.
type HistoryMessage struct {
	Seq     int64  `json:"seq"`
	Role    string `json:"role"`
	Content string `json:"content"`
	Time    string `json:"time"`
}

func (b *Bot) serveHistory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("conversation_id")
	if !idPattern.MatchString(id) {
		b.writeError(w, r, &RequestError{Field: "conversation_id", Reason: "must be 1 to 128 letters, digits, '_', '.', ':' or '-'"})
		return
	}
	after, limit := int64(0), 100
	if v := r.URL.Query().Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			b.writeError(w, r, &RequestError{Field: "after", Reason: "must be a non-negative integer"})
			return
		}
		after = n
	}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			b.writeError(w, r, &RequestError{Field: "limit", Reason: "must be an integer from 1 to 1000"})
			return
		}
		limit = n
	}
	msgs, err := b.convs.History(r.Context(), scoped(PrincipalFromContext(r.Context()), id), after, limit)
	if err == nil && len(msgs) == 0 && after == 0 {
		err = fmt.Errorf("%w %q", ErrUnknownConversation, id)
	}
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	out := struct {
		ConversationID string           `json:"conversation_id"`
		Messages       []HistoryMessage `json:"messages"`
	}{ConversationID: id, Messages: []HistoryMessage{}}
	for _, m := range msgs {
		out.Messages = append(out.Messages, HistoryMessage{Seq: m.Seq, Role: string(m.Role), Content: m.Content,
			Time: m.Time.UTC().Format("2006-01-02T15:04:05.000000Z")})
	}
	writeJSON(w, http.StatusOK, out)
}

func (b *Bot) serveTools(w http.ResponseWriter, r *http.Request) {
	tools, err := b.provider.ToolSummaries(r.Context())
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": tools})
}

func (b *Bot) serveHealth(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	status, code := "ok", http.StatusOK
	stores := b.stores.check(r.Context())
	for _, s := range stores {
		if !s.OK {
			status, code = "unhealthy", http.StatusServiceUnavailable
		}
	}
	if closed {
		status, code = "closing", http.StatusServiceUnavailable
	}
	out := map[string]any{"status": status, "version": Version, "demo": b.demo, "auth": !b.guard.Open()}
	if stores != nil {
		out["stores"] = stores
	}
	p, err := b.guard.Authenticate(r)
	if err != nil {
		// The servers' state and cognition's patterns are for those who
		// may use the API.
		writeJSON(w, code, out)
		return
	}
	// The servers' last errors may quote any principal's tool arguments,
	// and cognition's patterns name users of every principal: in full for
	// admins only.
	admin := b.admin(p)
	servers := []ServerHealth{}
	for _, h := range b.manager.Health() {
		sh := ServerHealth{Name: h.Server, Transport: string(h.Transport), State: string(h.State),
			Connected: h.Connected, InFlight: h.InFlight, Waiting: h.Waiting, Failures: h.Failures,
			DroppedProgress: h.DroppedProgress, RejectedRequests: h.RejectedRequests}
		if admin {
			sh.LastError = h.LastError
		}
		servers = append(servers, sh)
	}
	out["mcp"] = servers
	if b.cog != nil {
		out["cognition"] = b.cog.health(r.Context(), p, admin)
	}
	writeJSON(w, code, out)
}

// admin reports whether principal sees every principal's details in GET
// /health: one of Config.Admins, or, without authentication, the one
// principal of this machine (LocalPrincipal).
func (b *Bot) admin(principal string) bool {
	return b.guard.Open() || slices.Contains(b.cfg.Admins, principal)
}

// ServerHealth is one MCP server's entry in GET /health (see
// mcp.Health); LastError is shown to admins only (Config.Admins).
type ServerHealth struct {
	// Name is the server's name in Config.Servers.
	Name string `json:"name"`
	// Transport is how the server is reached: "stdio", "http", "sse" or
	// "inprocess".
	Transport string `json:"transport"`
	// State is "unknown" (no call yet), "healthy", "unhealthy" (the last
	// call failed on the transport) or "open" (the circuit breaker fails
	// calls fast until it cools down).
	State string `json:"state"`
	// Connected reports whether a client is connected now.
	Connected bool `json:"connected"`
	// InFlight counts the calls the server is running now: its load.
	InFlight int `json:"in_flight"`
	// Waiting counts the calls whose server waits for a person to answer
	// a question (elicitation); they hold none of its concurrency slots.
	Waiting int `json:"waiting"`
	// Failures counts the transport failures and timed-out calls in a
	// row.
	Failures int `json:"failures"`
	// DroppedProgress counts the server's progress notifications dropped
	// because the turn reading them was too far behind, or had returned.
	DroppedProgress int64 `json:"dropped_progress"`
	// RejectedRequests counts the requests the server sent the bot
	// (elicitations, pings, roots, sampling) refused at once because too
	// many of its requests were being answered already.
	RejectedRequests int64 `json:"rejected_requests"`
	// LastError is the last failure's message, for admins only.
	LastError string `json:"last_error,omitempty"`
}

// Respond delivers the user's answer to a pending elicitation of a
// running turn of ctx's principal ([WithPrincipal]); a question of
// another principal's turn is ErrUnknownElicitation, like one that does
// not exist.
//
// With Config.Postgres, a question of a turn that another instance runs is
// answered through that instance (relayed over Config.NATS, or over
// PostgreSQL's LISTEN/NOTIFY without it).
func (b *Bot) Respond(ctx context.Context, resp chatevent.ElicitationResponse) error {
	p := PrincipalFromContext(ctx)
	err := b.respondHere(p, resp)
	if errors.Is(err, ErrUnknownElicitation) && b.cluster != nil {
		return b.cluster.forward(ctx, relayRequest{Kind: "answer", Principal: p, Response: resp})
	}
	return err
}

// respondHere delivers the answer to a question of principal p's turns
// running on this instance.
func (b *Bot) respondHere(p string, resp chatevent.ElicitationResponse) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for t := range b.turns {
		if t.principal != p {
			continue
		}
		if slices.Contains(t.elicit.Pending(), resp.ElicitationID) {
			if resp.Action == elicit.Accept {
				if err := checkAnswer(t.schemas[resp.ElicitationID], resp.Content); err != nil {
					return err
				}
			} else {
				resp.Content = nil // only an accepted answer has content
			}
			return t.elicit.Respond(resp.Response)
		}
	}
	return ErrUnknownElicitation
}

// Pending lists the ids of the elicitations of ctx's principal's turns
// waiting for an answer, sorted: those of the turns this instance runs
// (with Config.Postgres, another instance's questions are answered through
// this one, but not listed).
func (b *Bot) Pending(ctx context.Context) []string {
	p := PrincipalFromContext(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	ids := []string{}
	for t := range b.turns {
		if t.principal == p {
			ids = append(ids, t.elicit.Pending()...)
		}
	}
	slices.Sort(ids)
	return ids
}

func (b *Bot) serveRespond(w http.ResponseWriter, r *http.Request) {
	var resp chatevent.ElicitationResponse
	if err := b.decode(w, r, &resp); err != nil {
		b.writeError(w, r, err)
		return
	}
	if resp.ElicitationID == "" {
		b.writeError(w, r, &RequestError{Field: "elicitation_id", Reason: "is required"})
		return
	}
	if !resp.Action.Valid() {
		b.writeError(w, r, &RequestError{Field: "action", Reason: `must be "accept", "decline" or "cancel"`})
		return
	}
	if err := b.Respond(r.Context(), resp); err != nil {
		b.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "delivered", "elicitation_id": resp.ElicitationID})
}

func (b *Bot) servePending(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"pending": b.Pending(r.Context())})
}

func (b *Bot) serveDecline(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := b.Respond(r.Context(), chatevent.ElicitationResponse{Response: elicit.Response{ElicitationID: id, Action: elicit.Decline}}); err != nil {
		b.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "declined", "elicitation_id": id})
}
