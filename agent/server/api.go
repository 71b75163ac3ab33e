package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/internal/utf8clip"
)

func (s *Server) routes() {
	m := http.NewServeMux()
	s.mux = m
	m.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]bool{"ok": true}) })
	m.HandleFunc("GET /info", s.info)
	m.HandleFunc("POST /assistants", s.createAssistant)
	m.HandleFunc("POST /assistants/search", s.searchAssistants)
	m.HandleFunc("POST /assistants/count", s.countAssistants)
	m.HandleFunc("GET /assistants/{id}", s.getAssistant)
	m.HandleFunc("PATCH /assistants/{id}", s.patchAssistant)
	m.HandleFunc("DELETE /assistants/{id}", s.deleteAssistant)
	m.HandleFunc("POST /assistants/{id}/versions", s.assistantVersions)
	m.HandleFunc("POST /assistants/{id}/latest", s.setLatestAssistant)
	m.HandleFunc("GET /assistants/{id}/graph", s.getAssistantGraph)
	m.HandleFunc("GET /assistants/{id}/schemas", s.getAssistantSchemas)
	m.HandleFunc("GET /assistants/{id}/subgraphs", s.getAssistantSubgraphs)
	m.HandleFunc("GET /assistants/{id}/subgraphs/{namespace}", s.getAssistantSubgraphs)
	m.HandleFunc("POST /threads", s.createThread)
	m.HandleFunc("POST /threads/search", s.searchThreads)
	m.HandleFunc("POST /threads/count", s.countThreads)
	m.HandleFunc("POST /threads/prune", s.pruneThreads)
	m.HandleFunc("POST /threads/{tid}/copy", s.copyThread)
	m.HandleFunc("GET /threads/{tid}", s.getThread)
	m.HandleFunc("PATCH /threads/{tid}", s.patchThread)
	m.HandleFunc("DELETE /threads/{tid}", s.deleteThread)
	m.HandleFunc("GET /threads/{tid}/state", s.getState)
	m.HandleFunc("GET /threads/{tid}/state/{cid}", s.getState)
	m.HandleFunc("POST /threads/{tid}/state/checkpoint", s.getStateAtCheckpoint)
	m.HandleFunc("POST /threads/{tid}/state", s.updateState)
	m.HandleFunc("PATCH /threads/{tid}/state", s.patchState)
	m.HandleFunc("POST /threads/{tid}/history", s.postHistory)
	m.HandleFunc("GET /threads/{tid}/history", s.getHistory)
	m.HandleFunc("POST /threads/{tid}/runs", s.createRunBackground)
	m.HandleFunc("POST /threads/{tid}/runs/stream", s.createRunStream)
	m.HandleFunc("POST /threads/{tid}/runs/wait", s.createRunWait)
	m.HandleFunc("GET /threads/{tid}/runs", s.listRuns)
	m.HandleFunc("GET /threads/{tid}/runs/{rid}", s.getRun)
	m.HandleFunc("DELETE /threads/{tid}/runs/{rid}", s.deleteRun)
	m.HandleFunc("GET /threads/{tid}/runs/{rid}/join", s.joinRun)
	m.HandleFunc("GET /threads/{tid}/runs/{rid}/stream", s.joinStream)
	m.HandleFunc("POST /threads/{tid}/runs/{rid}/cancel", s.cancelRun)
	m.HandleFunc("POST /runs", s.createRunBackground)
	m.HandleFunc("POST /runs/stream", s.createRunStream)
	m.HandleFunc("POST /runs/wait", s.createRunWait)
	m.HandleFunc("GET /runs/{rid}/stream", s.joinStream)
	m.HandleFunc("POST /runs/cancel", s.cancelRuns)
	s.itemRoutes()
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if allow := allowedMethods(m, r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, errorf(http.StatusMethodNotAllowed, "method %s: %s takes %s", r.Method, r.URL.Path, strings.Join(allow, ", ")))
			return
		}
		writeError(w, errorf(http.StatusNotFound, "no route %s %s in this server", r.Method, r.URL.Path))
	})
}

// allowedMethods are the methods m routes r's path with, other than to
// its catch-all "/": the methods to name when r's own is not one of them.
func allowedMethods(m *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if method == r.Method {
			continue
		}
		r2 := r.Clone(r.Context())
		r2.Method = method
		if _, pattern := m.Handler(r2); pattern != "/" && pattern != "" {
			allow = append(allow, method)
		}
	}
	return allow
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{
		"version": Version, "context": "go",
		"flags": map[string]any{"assistants": true, "crons": false, "langsmith": false, "langsmith_tracing_replicas": false, "store": s.itemsEnabled()},
	})
}

// --- assistants ---

func (s *Server) assistant(graphID string) map[string]any {
	var desc any
	if d := s.graph(graphID).describe(); d != "" {
		desc = d
	}
	t := stamp(s.start)
	return map[string]any{
		"assistant_id": AssistantID(graphID), "graph_id": graphID, "config": map[string]any{}, "context": map[string]any{},
		"metadata": map[string]any{"created_by": "system"}, "version": 1, "name": graphID, "description": desc,
		"created_at": t, "updated_at": t,
	}
}

// resolveAssistant maps an assistant id or graph id to its graph.
func (s *Server) resolveAssistant(id string) (runner, error) {
	s.gmu.RLock()
	defer s.gmu.RUnlock()
	if g, ok := s.graphs[id]; ok {
		return g, nil
	}
	if g, ok := s.byAsst[id]; ok {
		return s.graphs[g], nil
	}
	return nil, errorf(http.StatusNotFound, "assistant %q not found; use a graph id (%s) or its assistant id", clip(id), strings.Join(s.order, ", "))
}

// assistantQuery is the body of POST /assistants/search and
// /assistants/count: the assistants to select, and for search the page,
// its order and the fields to show.
type assistantQuery struct {
	GraphID   string         `json:"graph_id"`
	Name      string         `json:"name"`
	Metadata  map[string]any `json:"metadata"`
	Limit     *int           `json:"limit"`
	Offset    int            `json:"offset"`
	SortBy    string         `json:"sort_by"`
	SortOrder string         `json:"sort_order"`
	Select    []string       `json:"select"`
}

// assistantFieldNames are the fields of an Assistant, which a search's
// select may name.
var assistantFieldNames = []string{"assistant_id", "graph_id", "config", "context", "metadata", "version", "name", "description", "created_at", "updated_at"}

// assistantSortKeys are the fields a search's sort_by may name.
var assistantSortKeys = []string{"assistant_id", "graph_id", "name", "created_at", "updated_at"}

// check refuses a search whose page, order or selection is out of
// range or names no field.
func (q *assistantQuery) check() error {
	switch {
	case q.Limit != nil && *q.Limit < 0 || q.Offset < 0:
		return errorf(422, "limit and offset: must not be negative")
	case q.SortBy != "" && !slices.Contains(assistantSortKeys, q.SortBy):
		return errorf(422, "sort_by: %q is not one of %s", q.SortBy, strings.Join(assistantSortKeys, ", "))
	case q.SortOrder != "" && q.SortOrder != "asc" && q.SortOrder != "desc":
		return errorf(422, "sort_order: %q is not asc or desc", q.SortOrder)
	case len(q.Metadata) > MaxFilterKeys:
		return errorf(422, "metadata: filters on %d keys; give at most %d (MaxFilterKeys)", len(q.Metadata), MaxFilterKeys)
	}
	if err := checkSelectLen(q.Select); err != nil {
		return err
	}
	for i, name := range q.Select {
		if !slices.Contains(assistantFieldNames, name) {
			return errorf(422, "select[%d]: %q is not one of %s", i, name, strings.Join(assistantFieldNames, ", "))
		}
	}
	return nil
}

// matchAssistants returns the assistants q selects: the graphs' own, then
// those the principal created (at most Config.MaxAssistants).
func (s *Server) matchAssistants(ctx context.Context, who string, q assistantQuery) ([]map[string]any, error) {
	out := []map[string]any{}
	match := func(a map[string]any) {
		if q.GraphID != "" && q.GraphID != a["graph_id"] {
			return
		}
		if q.Name != "" && !strings.Contains(strings.ToLower(a["name"].(string)), strings.ToLower(q.Name)) {
			return
		}
		if !containsAll(a["metadata"].(map[string]any), q.Metadata) {
			return
		}
		out = append(out, a)
	}
	for _, g := range s.graphIDs() {
		match(s.assistant(g))
	}
	if as, ok := s.store.(AssistantStore); ok {
		own, err := as.Assistants(ctx, who)
		if err != nil {
			return nil, err
		}
		for _, a := range own {
			match(assistantJSON(a))
		}
	}
	return out, nil
}

func (s *Server) searchAssistants(w http.ResponseWriter, r *http.Request) {
	var q assistantQuery
	if err := decodeBody(r, &q); err != nil {
		writeError(w, err)
		return
	}
	if q.SortBy == "" && q.SortOrder != "" {
		q.SortBy = "created_at" // as a thread search orders, and as the SDKs send sort_order alone
	}
	if err := q.check(); err != nil {
		writeError(w, err)
		return
	}
	limit := 10
	if q.Limit != nil {
		limit = *q.Limit
	}
	all, err := s.matchAssistants(r.Context(), principal(r), q)
	if err != nil {
		writeError(w, err)
		return
	}
	if q.SortBy != "" {
		// Stable: assistants equal on the key (the graphs' own share
		// created_at) stay in the order their graphs were registered,
		// then the principal's own in the order they were created.
		slices.SortStableFunc(all, func(a, b map[string]any) int {
			c := strings.Compare(a[q.SortBy].(string), b[q.SortBy].(string))
			if q.SortOrder != "asc" {
				c = -c
			}
			return c
		})
	}
	pg := page(all, q.Offset, limit)
	if len(q.Select) > 0 {
		for i, a := range pg {
			sel := make(map[string]any, len(q.Select))
			for _, f := range q.Select {
				sel[f] = a[f]
			}
			pg[i] = sel
		}
	}
	w.Header().Set("X-Pagination-Total", strconv.Itoa(len(all)))
	if q.Offset+len(pg) < len(all) {
		w.Header().Set("X-Pagination-Next", strconv.Itoa(q.Offset+len(pg)))
	}
	writeJSON(w, 200, pg)
}

func (s *Server) countAssistants(w http.ResponseWriter, r *http.Request) {
	var q assistantQuery
	if err := decodeBody(r, &q); err != nil {
		writeError(w, err)
		return
	}
	if q.Limit != nil || q.Offset != 0 || q.SortBy != "" || q.SortOrder != "" || len(q.Select) > 0 {
		writeError(w, errorf(422, "limit, offset, sort_by, sort_order and select: not taken by a count; give graph_id, name or metadata"))
		return
	}
	if err := q.check(); err != nil {
		writeError(w, err)
		return
	}
	all, err := s.matchAssistants(r.Context(), principal(r), q)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, len(all))
}

func (s *Server) getAssistant(w http.ResponseWriter, r *http.Request) {
	g, a, err := s.ownAssistant(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if a != nil {
		writeJSON(w, 200, assistantJSON(a))
		return
	}
	writeJSON(w, 200, s.assistant(g.graphID()))
}

// --- threads ---

func threadJSON(t *Thread) map[string]any {
	vals := t.Values
	if len(vals) == 0 {
		vals = json.RawMessage("{}")
	}
	ins := t.Interrupts
	if ins == nil {
		ins = map[string][]Interrupt{}
	}
	md, cfg := t.Metadata, t.Config
	if md == nil {
		md = map[string]any{}
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	return map[string]any{"thread_id": t.ID, "created_at": stamp(t.CreatedAt), "updated_at": stamp(t.UpdatedAt),
		"metadata": md, "status": t.Status, "config": cfg, "values": vals, "interrupts": ins}
}

// canonUUID checks that id is a UUID and returns its canonical form
// (lowercase, hyphenated), the one ids are kept under: the same UUID
// written in upper case, in braces, as a URN or without hyphens names the
// same thread or run, and never a second one.
func canonUUID(field, id string) (string, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		// A thread's id is a UUID: it never holds "|", which joins a
		// thread's id and a task's into its subgraph's checkpoint thread
		// (graph.SubgraphThread), deleted with the thread.
		return "", errorf(http.StatusUnprocessableEntity, "%s: %q is not a UUID; use a UUID (as POST /threads makes one)", field, clip(id))
	}
	return u.String(), nil
}

// maxEcho bounds the bytes of a client's value an error message quotes.
const maxEcho = 100

// clip returns s, or its first maxEcho bytes (at a rune boundary) and
// "...": an error quotes what the client sent, not all of it (an id of a
// megabyte would be answered a megabyte).
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return utf8clip.Clip(s, maxEcho) + "..."
}

// ownThread loads a thread the request's principal owns; another
// principal's thread is reported missing.
func (s *Server) ownThread(r *http.Request, id string) (*Thread, error) {
	id, err := canonUUID("thread_id", id)
	if err != nil {
		return nil, err
	}
	t, err := s.store.Thread(r.Context(), id)
	if errors.Is(err, ErrNotFound) || (err == nil && t.Owner != principal(r)) {
		return nil, errorf(http.StatusNotFound, "thread %s not found", id)
	}
	return t, err
}

// sameUUID reports whether a and b are the same UUID, however written.
func sameUUID(a, b string) bool {
	ua, erra := uuid.Parse(a)
	ub, errb := uuid.Parse(b)
	return erra == nil && errb == nil && ua == ub
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// checkThreadMetadata refuses thread metadata whose assistant_id, which
// runs set to the assistant they run, is not a string.
func checkThreadMetadata(md jsonObject) error {
	if v, ok := md["assistant_id"]; ok {
		if _, ok := v.(string); !ok {
			return errorf(422, "metadata.assistant_id: %s is not a string; give the assistant's id as a string, or leave it out", jsonText(v))
		}
	}
	return nil
}

func (s *Server) createThread(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ThreadID   string          `json:"thread_id"`
		Metadata   jsonObject      `json:"metadata"`
		IfExists   string          `json:"if_exists"`
		TTL        json.RawMessage `json:"ttl"`
		Supersteps json.RawMessage `json:"supersteps"`
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	if err := errors.Join(refuseTTL(body.TTL), refuseSet("supersteps", body.Supersteps,
		"create the thread, then give its history with POST /threads/{thread_id}/state"), checkStored("metadata", map[string]any(body.Metadata)), checkThreadMetadata(body.Metadata)); err != nil {
		writeError(w, err)
		return
	}
	switch body.IfExists {
	case "", "raise", "do_nothing":
	default:
		writeError(w, errorf(422, "if_exists: %q is not one of raise, do_nothing", body.IfExists))
		return
	}
	var err error
	if body.ThreadID == "" {
		body.ThreadID = newID()
	} else if body.ThreadID, err = canonUUID("thread_id", body.ThreadID); err != nil {
		writeError(w, err)
		return
	}
	t := &Thread{ID: body.ThreadID, Owner: principal(r), CreatedAt: now(), Metadata: body.Metadata, Status: ThreadIdle}
	t.UpdatedAt = t.CreatedAt
	if t.Metadata == nil {
		t.Metadata = map[string]any{}
	}
	if g, ok := t.Metadata["graph_id"].(string); ok {
		if s.graph(g) != nil {
			t.GraphID = g
		}
	}
	err = s.saveThread(r.Context(), t)
	if errors.Is(err, ErrExists) {
		old, oerr := s.ownThread(r, body.ThreadID)
		if oerr != nil {
			// Another principal's thread: do not reveal it exists.
			writeError(w, errorf(http.StatusConflict, "thread_id: %s cannot be used; choose another id", body.ThreadID))
			return
		}
		if body.IfExists == "do_nothing" {
			// The answer holds the thread's values: a read, counted
			// as GET /threads/{id} is (Config.MaxReads).
			who := principal(r)
			if !s.take(s.reads, who, s.cfg.MaxReads) {
				w.Header().Set("Retry-After", "1")
				writeError(w, errorf(http.StatusTooManyRequests, "%d reads of yours are served at once (Config.MaxReads); wait for one to end", s.cfg.MaxReads))
				return
			}
			defer s.give(s.reads, who)
			writeJSON(w, 200, threadJSON(old))
			return
		}
		writeError(w, errorf(http.StatusConflict, "thread %s already exists; set if_exists to do_nothing to get it instead", body.ThreadID))
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, threadJSON(t))
}

// checkStored refuses, in v, a JSON value decoded from the request's
// field that is kept in a store or matched against what is (metadata and
// the filters on it), what not every store holds alike: a NUL character
// (checkNUL) and a number beyond a float64's (checkNumbers).
func checkStored(field string, v any) error {
	if err := checkNUL(field, v); err != nil {
		return err
	}
	return checkNumbers(field, v)
}

// checkNUL refuses a NUL character (\u0000) in the keys and strings of
// v, a JSON value decoded from the request's field: metadata, and the
// filters that match it, are kept where PostgreSQL's jsonb cannot hold
// one, and every store refuses it alike so that a client meets one rule.
func checkNUL(field string, v any) error {
	if !hasNUL(v) {
		return nil // without naming each field on the way
	}
	rev, what, _ := findNUL(v)
	var b strings.Builder
	b.WriteString(field)
	for i := len(rev) - 1; i >= 0; i-- {
		b.WriteString(rev[i])
	}
	return errorf(422, "%s: %s holds a NUL character (\\u0000), which metadata cannot keep; remove it", clip(b.String()), what)
}

// findNUL reports whether v holds a NUL character and where the first
// one is: the steps of its path innermost first (".key", "[i]"), built
// on the way out of the one branch that holds it, so that a deep value
// costs its size, not its depth squared; and what holds it, quoted.
func findNUL(v any) (rev []string, what string, found bool) {
	switch x := v.(type) {
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			return nil, strconv.Quote(clip(x)), true
		}
	case map[string]any:
		for k, e := range x {
			if strings.IndexByte(k, 0) >= 0 {
				return nil, "the key " + strconv.Quote(clip(k)), true
			}
			if rev, what, found = findNUL(e); found {
				return append(rev, "."+k), what, true
			}
		}
	case []any:
		for i, e := range x {
			if rev, what, found = findNUL(e); found {
				return append(rev, "["+strconv.Itoa(i)+"]"), what, true
			}
		}
	}
	return nil, "", false
}

// hasNUL reports whether a decoded JSON value holds a NUL character in
// a string or a key.
func hasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.IndexByte(x, 0) >= 0
	case map[string]any:
		for k, e := range x {
			if strings.IndexByte(k, 0) >= 0 || hasNUL(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNUL(e) {
				return true
			}
		}
	}
	return false
}

// refuseSet refuses a field this server does not apply when the request
// gives it (not null), with the way to do without it.
func refuseSet(field string, raw json.RawMessage, instead string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return errorf(422, "%s: not supported by this server; %s", field, instead)
}

// refuseTTL refuses a thread ttl: threads are kept until deleted.
func refuseTTL(raw json.RawMessage) error {
	return refuseSet("ttl", raw, "threads are kept until deleted: delete them with DELETE /threads/{thread_id} or POST /threads/prune")
}

func (s *Server) getThread(w http.ResponseWriter, r *http.Request) {
	t, err := s.ownThread(r, r.PathValue("tid"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, threadJSON(t))
}

func (s *Server) patchThread(w http.ResponseWriter, r *http.Request) {
	t, err := s.ownThread(r, r.PathValue("tid"))
	if err != nil {
		writeError(w, err)
		return
	}
	var body struct {
		Metadata jsonObject      `json:"metadata"`
		TTL      json.RawMessage `json:"ttl"`
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	if err := errors.Join(refuseTTL(body.TTL), checkStored("metadata", map[string]any(body.Metadata)), checkThreadMetadata(body.Metadata)); err != nil {
		writeError(w, err)
		return
	}
	t, err = s.store.UpdateThread(r.Context(), t.ID, func(t *Thread) error {
		if t.Metadata == nil {
			t.Metadata = map[string]any{}
		}
		if v, ok := body.Metadata["graph_id"]; ok {
			// graph_id says which graph runs the thread: it may name the
			// graph of a thread that has none yet, never another one.
			g, _ := v.(string)
			switch {
			case t.GraphID != "" && g != t.GraphID:
				return errorf(422, "metadata.graph_id: thread %s runs graph %q; leave graph_id out, or use a new thread for another graph", t.ID, t.GraphID)
			case t.GraphID == "" && s.graph(g) != nil:
				t.GraphID = g
			}
		}
		// checkThreadMetadata made a given assistant_id a string; the
		// stored one may predate that check.
		v, ok := body.Metadata["assistant_id"].(string)
		cur, _ := t.Metadata["assistant_id"].(string)
		if ok && t.GraphID != "" && v != AssistantID(t.GraphID) && v != cur {
			return errorf(422, "metadata.assistant_id: thread %s runs the assistant %s of graph %q; leave assistant_id out", t.ID, AssistantID(t.GraphID), t.GraphID)
		}
		for k, v := range body.Metadata {
			t.Metadata[k] = v
		}
		t.UpdatedAt = now()
		return nil
	})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, threadJSON(t))
}

func (s *Server) deleteThread(w http.ResponseWriter, r *http.Request) {
	t, err := s.ownThread(r, r.PathValue("tid"))
	if err != nil {
		writeError(w, err)
		return
	}
	err = s.removeThread(r.Context(), t.ID)
	s.forgetThreadBytes(t.Owner) // its bytes no longer count (Config.MaxThreadBytes)
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// removeThread deletes the thread with its runs, event logs and
// checkpoints. Under the thread's lock (so no run is created meanwhile) it
// cancels the thread's runs; it waits, unlocked, until those running here
// have stopped, so that none saves a checkpoint after the thread is gone,
// and tries again until the thread has no run left to stop.
func (s *Server) removeThread(ctx context.Context, id string) error {
	return s.removeThreadWithin(ctx, nil, id)
}

// removeThreadWithin is removeThread whose wait for the runs of other
// instances also ends when patience (if not nil) is done: the thread is
// then deleted without waiting for them any longer, as it is after a
// lease for a run whose instance seems dead. Should such a run still
// run, it stops when it finds its record gone, and its instance then
// deletes the checkpoints it saved since (dropOrphan). ctx bounds the
// whole deletion, its store calls included.
func (s *Server) removeThreadWithin(ctx, patience context.Context, id string) error {
	waited := map[string]bool{} // runs of other instances waited for once
	for {
		unlock, err := s.locks.Lock(ctx, id)
		if err != nil {
			return err
		}
		running, remote, err := s.cancelAll(ctx, id)
		remote = slices.DeleteFunc(remote, func(runID string) bool { return waited[runID] })
		if err != nil || len(running) > 0 || len(remote) > 0 {
			unlock()
			if err != nil {
				return err
			}
			for _, runID := range running {
				if err := s.awaitEnd(ctx, runID); err != nil {
					return err
				}
			}
			// A run of another instance ends when that instance acts on
			// the cancellation; one whose instance died is waited for
			// about a lease, then deleted anyway (should it still run, it
			// stops when it finds its record gone, and its checkpoints
			// saved since go then: dropOrphan).
			for _, runID := range remote {
				waited[runID] = true
				wctx, cancel := context.WithTimeout(ctx, s.cfg.Lease)
				stop := func() bool { return false }
				if patience != nil {
					stop = context.AfterFunc(patience, cancel)
				}
				err := s.awaitEnd(wctx, runID)
				stop()
				cancel()
				if err != nil && ctx.Err() != nil {
					return ctx.Err()
				}
			}
			continue
		}
		runs, err := s.runIDs(ctx, id)
		var plan []string
		if err == nil {
			// The thread's durable subgraphs' checkpoint threads go
			// with it (found as a copy finds them).
			var over bool
			plan, over, err = s.checkpointThreads(ctx, id)
			if over {
				s.log.Warn("deleting a thread: its durable subgraphs' checkpoints past Config.MaxCopyCheckpoints are not looked for", zapString("thread_id", id))
			}
		}
		owner, hooks := "", false
		if err == nil {
			owner, hooks, err = s.threadOwner(ctx, id)
		}
		deleted := false
		if err == nil {
			err = s.store.DeleteThread(ctx, id)
			deleted = err == nil
		}
		for _, sub := range plan {
			if err == nil {
				err = s.saver.DeleteThread(ctx, id+sub)
			}
		}
		// With the record gone, nothing would find the thread to call
		// the graphs' functions later: they run even when deleting its
		// checkpoints failed (those are left for a retry that cannot
		// come either, but the graphs' data need not stay with them).
		if deleted && hooks {
			s.threadDeleted(ctx, id, owner)
		}
		unlock()
		for _, runID := range runs {
			s.hub.notify(runID)
		}
		return err
	}
}

// runIDs returns the ids of the thread's runs, read a page at a time
// (of at most runIDsPage runs and about a MiB), so that the records of a
// thread with many large runs are not all held at once. The pages go
// newest first: the runs Prune deletes meanwhile are the oldest, past
// the pages still to read, so no run is skipped. It stops at a page
// short of runIDsPage runs that is not cut by bytes, at a page of runs
// all already read (a store that ignores the page's Offset or Limit),
// and after runIDsMaxPages pages.
func (s *Server) runIDs(ctx context.Context, threadID string) ([]string, error) {
	const max = 1 << 20
	var ids []string
	seen := map[string]bool{}
	for range runIDsMaxPages {
		runs, err := s.store.Runs(ctx, RunQuery{ThreadID: threadID, Newest: true, Offset: len(ids), Limit: runIDsPage, MaxBytes: max})
		if err != nil {
			return ids, err
		}
		size, fresh := 0, false
		for _, r := range runs {
			size += r.Size()
			if !seen[r.ID] {
				seen[r.ID] = true
				ids = append(ids, r.ID)
				fresh = true
			}
		}
		if !fresh || (len(runs) < runIDsPage && size <= max) {
			return ids, nil
		}
	}
	s.log.Warn("deleting a thread: its runs past the pages read are not notified", zapString("thread_id", threadID), zapInt("runs", len(ids)))
	return ids, nil
}

// runIDsPage and runIDsMaxPages bound the pages runIDs reads.
const (
	runIDsPage     = 100
	runIDsMaxPages = 10000
)

// cancelAll cancels the thread's pending and running runs; the caller
// holds the thread's lock. It returns the runs running in this process,
// which end when their graphs stop, and those running on other instances,
// which are asked to stop.
func (s *Server) cancelAll(ctx context.Context, id string) (running, remote []string, err error) {
	active, err := s.activeRuns(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range active {
		s.mu.Lock()
		here := s.cancel[a.ID] != nil
		s.mu.Unlock()
		if err := s.cancelLocked(ctx, a, "interrupt"); err != nil {
			return nil, nil, err
		}
		switch {
		case here:
			running = append(running, a.ID)
		case a.Status == RunRunning && a.LeaseUntil.After(time.Now()): // its instance is alive
			remote = append(remote, a.ID)
		}
	}
	return running, remote, nil
}

// awaitEnd waits until the run has ended (or is deleted), or ctx is done.
func (s *Server) awaitEnd(ctx context.Context, runID string) error {
	ch, release := s.hub.watch(runID, "")
	defer func() { release() }()
	for {
		cur, err := s.store.Run(ctx, runID)
		if errors.Is(err, ErrNotFound) || err == nil && finished(cur.Status) {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-ch:
			ch, release = s.rewatch(runID, "", release)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// threadFilter is the body of POST /threads/search and /threads/count:
// the threads to select, and for search the page and the fields to show.
type threadFilter struct {
	Metadata  jsonObject      `json:"metadata"`
	Values    jsonObject      `json:"values"`
	IDs       []string        `json:"ids"`
	Status    string          `json:"status"`
	Limit     *int            `json:"limit"`
	Offset    int             `json:"offset"`
	SortBy    string          `json:"sort_by"`
	SortOrder string          `json:"sort_order"`
	Select    []string        `json:"select"`
	Extract   json.RawMessage `json:"extract"`
}

// MaxFilterKeys bounds the keys of the metadata and of the values a
// thread search or count filters on, and of the metadata a history
// filters on: each is a condition of the store's query, which a database
// plans in time that grows faster than their number, or a comparison
// made for every thread or checkpoint.
const MaxFilterKeys = 100

// maxSelect bounds the fields a select lists: each is copied for every
// thread or state of the answer.
const maxSelect = 100

// checkSelectLen refuses a select of more than maxSelect fields.
func checkSelectLen(sel []string) error {
	if len(sel) > maxSelect {
		return errorf(422, "select: %d fields; give at most %d, each once", len(sel), maxSelect)
	}
	return nil
}

// threadFieldNames are the fields of a Thread, which a search's select
// may name.
var threadFieldNames = []string{"thread_id", "created_at", "updated_at", "metadata", "status", "config", "values", "interrupts"}

// query checks the filter and returns the store's query for who.
func (f *threadFilter) query(who string) (ThreadQuery, error) {
	limit := 10
	if f.Limit != nil {
		limit = *f.Limit
	}
	switch {
	case limit < 0 || limit > 1000:
		return ThreadQuery{}, errorf(422, "limit: %d is out of range; use 0 to 1000", limit)
	case f.Offset < 0:
		return ThreadQuery{}, errorf(422, "offset: must not be negative")
	case len(f.IDs) > 1000:
		return ThreadQuery{}, errorf(422, "ids: %d ids; give at most 1000", len(f.IDs))
	case len(f.Metadata) > MaxFilterKeys:
		return ThreadQuery{}, errorf(422, "metadata: filters on %d keys; give at most %d (MaxFilterKeys)", len(f.Metadata), MaxFilterKeys)
	case len(f.Values) > MaxFilterKeys:
		return ThreadQuery{}, errorf(422, "values: filters on %d keys; give at most %d (MaxFilterKeys)", len(f.Values), MaxFilterKeys)
	case f.Status != "" && !slices.Contains([]string{ThreadIdle, ThreadBusy, ThreadInterrupted, ThreadError}, f.Status):
		return ThreadQuery{}, errorf(422, "status: %q is not one of idle, busy, interrupted, error", f.Status)
	case f.SortBy != "" && !slices.Contains([]string{"thread_id", "status", "created_at", "updated_at"}, f.SortBy):
		return ThreadQuery{}, errorf(422, "sort_by: %q is not one of thread_id, status, created_at, updated_at", f.SortBy)
	case f.SortOrder != "" && f.SortOrder != "asc" && f.SortOrder != "desc":
		return ThreadQuery{}, errorf(422, "sort_order: %q is not asc or desc", f.SortOrder)
	case len(f.Extract) > 0 && string(f.Extract) != "null" && string(f.Extract) != "{}":
		return ThreadQuery{}, errorf(422, "extract: not supported by this server; select values and read the keys from them")
	}
	if err := errors.Join(checkStored("metadata", map[string]any(f.Metadata)), checkNumbers("values", map[string]any(f.Values)), checkSelectLen(f.Select)); err != nil {
		return ThreadQuery{}, err
	}
	for i, name := range f.Select {
		if !slices.Contains(threadFieldNames, name) {
			return ThreadQuery{}, errorf(422, "select[%d]: %q is not one of %s", i, name, strings.Join(threadFieldNames, ", "))
		}
	}
	ids := make([]string, len(f.IDs))
	for i, id := range f.IDs {
		c, err := canonUUID(fmt.Sprintf("ids[%d]", i), id)
		if err != nil {
			return ThreadQuery{}, err
		}
		ids[i] = c
	}
	if f.IDs == nil {
		ids = nil
	}
	return ThreadQuery{Owner: who, IDs: ids, Metadata: f.Metadata, Values: f.Values, Status: f.Status,
		Limit: limit, Offset: f.Offset, SortBy: f.SortBy, SortDesc: f.SortOrder != "asc"}, nil
}

func (s *Server) searchThreads(w http.ResponseWriter, r *http.Request) {
	var body threadFilter
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	q, ts, total, err := s.searchBy(r, &body, s.responseBudget())
	if err != nil {
		writeError(w, err)
		return
	}
	// The page is cut here: a store returns the thread past the budget
	// (ThreadQuery.MaxBytes), and one may not honour it.
	ts, cut := cutBytes(ts, s.responseBudget(), (*Thread).Size)
	markTruncated(w, cut || len(ts) < q.Limit && q.Offset+len(ts) < total)
	out := make([]map[string]any, 0, len(ts))
	for _, t := range ts {
		m := threadJSON(t)
		if len(body.Select) > 0 {
			sel := make(map[string]any, len(body.Select))
			for _, f := range body.Select {
				sel[f] = m[f]
			}
			m = sel
		}
		out = append(out, m)
	}
	w.Header().Set("X-Pagination-Total", strconv.Itoa(total))
	if q.Offset+len(ts) < total {
		w.Header().Set("X-Pagination-Next", strconv.Itoa(q.Offset+len(ts)))
	}
	writeJSON(w, 200, out)
}

// countThreads answers how many of the principal's threads the filter
// selects (metadata, values, status, ids), as search counts them.
func (s *Server) countThreads(w http.ResponseWriter, r *http.Request) {
	var body threadFilter
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	if body.Limit != nil || body.Offset != 0 || body.SortBy != "" || body.SortOrder != "" || len(body.Select) > 0 {
		writeError(w, errorf(422, "limit, offset, sort_by, sort_order and select: not taken by a count; give metadata, values, status or ids"))
		return
	}
	one := 1
	body.Limit = &one // the store counts every thread selected, whatever the page
	_, _, total, err := s.searchBy(r, &body, 0)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, total)
}

// searchBy searches the request's principal's threads with the filter f:
// the query made of it, a page of threads (of at most maxBytes, when
// positive: ThreadQuery.MaxBytes) and how many the filter selects.
func (s *Server) searchBy(r *http.Request, f *threadFilter, maxBytes int) (ThreadQuery, []*Thread, int, error) {
	q, err := f.query(principal(r))
	if err != nil {
		return q, nil, 0, err
	}
	q.MaxBytes = maxBytes
	ts, total, err := s.store.SearchThreads(r.Context(), q)
	return q, ts, total, err
}

// copyThread makes a new thread of the principal's with a copy of the
// thread's record (metadata, values, interrupts, status) and of every
// checkpoint, so that the copy's state and history are the thread's and
// the two go on apart. The checkpoints of the thread's durable subgraphs
// (on the threads graph.SubgraphThread names, in the server's
// checkpointer) are copied too, so that a run on the copy resumes a
// subgraph stopped in a step where it stopped. A busy thread is refused:
// its history is being written. The new thread counts against
// Config.MaxThreads before anything is copied. Its checkpoints are
// copied first, under an id no record names, and its record is saved
// last with its final status, in one write: the copy appears whole or
// not at all, and a copy cut by a crash leaves no thread behind (only
// checkpoints under an id no client learnt). A copy that fails deletes
// the checkpoints it copied (and logs, with their thread id, those it
// cannot delete).
func (s *Server) copyThread(w http.ResponseWriter, r *http.Request) {
	src, unlock, err := s.idleThread(r, r.PathValue("tid"), "copying the thread")
	if err != nil {
		writeError(w, err)
		return
	}
	defer unlock()
	ctx := r.Context()
	plan, err := s.copyPlan(ctx, src.ID)
	if err != nil {
		writeError(w, err)
		return
	}
	t := cloneThread(src)
	t.ID, t.CreatedAt = newID(), now()
	t.UpdatedAt = t.CreatedAt
	if t.Status == ThreadBusy {
		t.Status = ThreadIdle // its runs ended since it was read
	}
	// The checkpoints first, under the new id, which no record names
	// yet, then the record with its final status, in one write: a copy
	// cut between its steps (the process dies) leaves no thread, neither
	// busy for ever nor half copied, only checkpoints under an id no
	// client knows. (The record was saved busy first, and a crash left
	// it busy.) The thread limit is checked first too, so that a copy it
	// refuses copies nothing; saveThread checks it again.
	if err := s.checkThreads(ctx, t.Owner); err != nil {
		writeError(w, err)
		return
	}
	if err := s.checkThreadBytes(ctx, t.Owner); err != nil {
		writeError(w, err)
		return
	}
	if err := s.copyCheckpoints(ctx, src.ID, t.ID, plan); err != nil {
		s.discardCopy(t.ID, plan)
		writeError(w, err)
		return
	}
	if err := s.saveThread(ctx, t); err != nil {
		s.discardCopy(t.ID, plan)
		writeError(w, err)
		return
	}
	// The copy's bytes count for its principal at once, not from its
	// first run's end; this instance reads the principal's sum again at
	// its next check, so that copies within the sum's second do not
	// pass the bound unseen.
	s.recordThreadBytes(ctx, t.ID, len(plan) > 1)
	s.forgetThreadBytes(t.Owner)
	writeJSON(w, 200, threadJSON(t))
}

// copyPlan lists the checkpoint threads a copy of thread tid copies: tid
// itself ("") and, by their suffix after tid, the threads of its durable
// subgraphs, found from the tasks each checkpoint scheduled (a subgraph's
// thread is its parent's followed by "|" and the task's id, as
// graph.SubgraphThread makes it), depth first. It refuses with 422 a
// thread whose checkpoints, its subgraphs' included, are more than
// Config.MaxCopyCheckpoints, or store more than Config.MaxCopyBytes.
func (s *Server) copyPlan(ctx context.Context, tid string) ([]string, error) {
	plan, over, err := s.checkpointThreads(ctx, tid)
	switch {
	case err != nil:
		return nil, err
	case over && len(plan) > 1:
		return nil, errorf(422, "thread %s has more than %d checkpoints with its durable subgraphs' (Config.MaxCopyCheckpoints); raise Config.MaxCopyCheckpoints to copy it", tid, s.cfg.MaxCopyCheckpoints)
	case over:
		return nil, errorf(422, "thread %s has more than %d checkpoints (Config.MaxCopyCheckpoints); prune it first with POST /threads/prune and strategy keep_latest, or raise Config.MaxCopyCheckpoints", tid, s.cfg.MaxCopyCheckpoints)
	}
	if err := s.checkCopyBytes(ctx, tid, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// checkCopyBytes refuses with 422 the copy of thread tid whose checkpoint
// threads (plan) store more than Config.MaxCopyBytes, as a checkpointer
// that is a checkpoint.UsageReporter reports them; other checkpointers
// are not bounded. The check is approximate: it counts the channel blobs
// and pending writes the reporter counts (checkpoint.Usage), not the
// checkpoints' own inline payloads (their metadata and small channel
// values), and checkpoints written between the check and the copy are
// copied uncounted.
func (s *Server) checkCopyBytes(ctx context.Context, tid string, plan []string) error {
	u, ok := s.saver.(checkpoint.UsageReporter)
	if !ok || s.cfg.MaxCopyBytes < 0 {
		return nil
	}
	var total int64
	for _, sub := range plan {
		n, err := u.Usage(ctx, tid+sub)
		if err != nil {
			return err
		}
		total += n.BlobBytes + n.WriteBytes
	}
	if total > s.cfg.MaxCopyBytes {
		return errorf(422, "thread %s stores %d bytes of checkpoints with its durable subgraphs', more than a copy takes (Config.MaxCopyBytes, %d); prune it first with POST /threads/prune and strategy keep_latest, or raise Config.MaxCopyBytes", tid, total, s.cfg.MaxCopyBytes)
	}
	return nil
}

// checkpointThreads is copyPlan's walk: the checkpoint threads of thread
// tid, by their suffix, found among its first Config.MaxCopyCheckpoints
// checkpoints, its subgraphs' included; over reports that it stopped
// there.
func (s *Server) checkpointThreads(ctx context.Context, tid string) (plan []string, over bool, err error) {
	max := s.cfg.MaxCopyCheckpoints
	walked := 0
	plan = []string{""}
	for i := 0; i < len(plan); i++ {
		cps, err := s.saver.List(ctx, tid+plan[i], checkpoint.ListOptions{Limit: max - walked + 1})
		if err != nil {
			return nil, false, err
		}
		walked += len(cps)
		if walked > max {
			over = true
			cps = cps[:len(cps)-(walked-max)]
		}
		seen := map[string]bool{}
		for _, cp := range cps {
			for _, task := range cp.Next {
				sub := plan[i] + "|" + task.ID
				if task.ID == "" || seen[sub] {
					continue
				}
				seen[sub] = true
				n, err := s.saver.List(ctx, tid+sub, checkpoint.ListOptions{Limit: 1})
				if err != nil {
					return nil, false, err
				}
				if len(n) > 0 {
					plan = append(plan, sub)
				}
			}
		}
		if over {
			break
		}
	}
	return plan, over, nil
}

// copyCheckpoints copies the checkpoint threads of plan from thread from
// to thread to.
func (s *Server) copyCheckpoints(ctx context.Context, from, to string, plan []string) error {
	for _, sub := range plan {
		if _, err := checkpoint.CopyThread(ctx, s.saver, from+sub, to+sub); err != nil {
			if errors.Is(err, checkpoint.ErrInvalid) {
				// The checkpointer copies through Get and Put, which a
				// pruned thread defeats: not a conflict to retry.
				return errorf(http.StatusNotImplemented, "thread %s cannot be copied by this checkpointer: %v", from, err)
			}
			return fmt.Errorf("server: copying the checkpoints of thread %s: %w", from+sub, err)
		}
	}
	return nil
}

// discardCopy deletes the thread record id and the checkpoint threads of
// plan under it, after a copy failed; it logs what it cannot delete.
func (s *Server) discardCopy(id string, plan []string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Lease)
	defer cancel()
	for _, sub := range plan {
		if err := s.saver.DeleteThread(ctx, id+sub); err != nil {
			s.log.Error("deleting the checkpoints of a failed thread copy", zapString("thread_id", id+sub), zapError(err))
		}
	}
	if err := s.store.DeleteThread(ctx, id); err != nil && !errors.Is(err, ErrNotFound) {
		s.log.Error("deleting the record of a failed thread copy", zapString("thread_id", id), zapError(err))
	}
}

// maxPruneThreads bounds the thread_ids of one POST /threads/prune.
const maxPruneThreads = 1000

// pruneThreads applies a strategy to the principal's threads named:
// delete deletes them (as DELETE /threads/{id} does); keep_latest deletes
// every checkpoint of each but its latest, keeping the thread and its
// state. It answers how many threads it pruned: ids of no thread of the
// principal's are not counted, nor, with keep_latest, threads that are
// busy or rolled back (their runs need their older checkpoints) or that
// had only their latest checkpoint. A thread it fails to prune does not
// stop it: the answer lists it under failed, with the error.
func (s *Server) pruneThreads(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ThreadIDs []string `json:"thread_ids"`
		Strategy  string   `json:"strategy"`
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	switch {
	case body.Strategy == "":
		body.Strategy = "delete"
	case body.Strategy != "delete" && body.Strategy != "keep_latest":
		writeError(w, errorf(422, "strategy: %q is not one of delete, keep_latest", body.Strategy))
		return
	}
	if len(body.ThreadIDs) > maxPruneThreads {
		writeError(w, errorf(422, "thread_ids: %d ids; give at most %d per request", len(body.ThreadIDs), maxPruneThreads))
		return
	}
	for i, id := range body.ThreadIDs {
		c, err := canonUUID(fmt.Sprintf("thread_ids[%d]", i), id)
		if err != nil {
			writeError(w, err)
			return
		}
		body.ThreadIDs[i] = c
	}
	ctx := r.Context()
	type failure struct {
		ThreadID string `json:"thread_id"`
		Detail   string `json:"detail"`
	}
	failed := []failure{}
	var threads []*Thread
	for _, id := range slices.Compact(slices.Sorted(slices.Values(body.ThreadIDs))) {
		t, err := s.ownThread(r, id)
		var re *requestError
		switch {
		case errors.As(err, &re) && re.status == http.StatusNotFound:
		case err != nil:
			failed = append(failed, failure{id, err.Error()})
		default:
			threads = append(threads, t)
		}
	}
	if body.Strategy == "delete" {
		// Cancel the runs of every thread first, then wait for them all
		// at once, so that the threads' runs stop together.
		var running []string
		for _, t := range threads {
			unlock, err := s.locks.Lock(ctx, t.ID)
			if err != nil {
				writeError(w, err)
				return
			}
			ids, _, err := s.cancelAll(ctx, t.ID)
			unlock()
			if err != nil {
				continue // removeThread tries again and reports it
			}
			running = append(running, ids...)
		}
		for _, runID := range running {
			if err := s.awaitEnd(ctx, runID); err != nil {
				writeError(w, err)
				return
			}
		}
	}
	pruned := 0
	for _, t := range threads {
		ok, err := s.pruneThread(ctx, t, body.Strategy)
		if err != nil {
			var re *requestError
			if ctx.Err() != nil || errors.As(err, &re) && re.status == http.StatusNotImplemented {
				writeError(w, cmp.Or(ctx.Err(), err))
				return
			}
			failed = append(failed, failure{t.ID, err.Error()})
			continue
		}
		if ok {
			pruned++
		}
	}
	out := map[string]any{"pruned_count": pruned}
	if len(failed) > 0 {
		out["failed"] = failed
	}
	writeJSON(w, 200, out)
}

// pruneThread applies strategy to t and reports whether it pruned
// anything.
func (s *Server) pruneThread(ctx context.Context, t *Thread, strategy string) (bool, error) {
	if strategy == "delete" {
		err := s.removeThread(ctx, t.ID)
		s.forgetThreadBytes(t.Owner) // its bytes no longer count (Config.MaxThreadBytes)
		return true, err
	}
	unlock, err := s.locks.Lock(ctx, t.ID)
	if err != nil {
		return false, err
	}
	defer unlock()
	active, err := s.activeRuns(ctx, t.ID)
	if err != nil {
		return false, err
	}
	cur, err := s.store.Thread(ctx, t.ID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if len(active) > 0 || cur.Head != "" || cur.Rolled {
		return false, nil
	}
	// The thread's durable subgraphs' checkpoint threads, found before
	// the prune drops the checkpoints that name them: those the kept
	// checkpoint no longer reaches are deleted with it, or they would
	// stay on disk, uncounted (Config.MaxThreadBytes) and never deleted
	// (a thread's deletion finds them the same way).
	before, _, err := s.checkpointThreads(ctx, t.ID)
	if err != nil {
		return false, err
	}
	p, err := checkpoint.Prune(ctx, s.saver, checkpoint.Retention{ThreadID: t.ID, KeepLatest: 1})
	if err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			return false, errorf(http.StatusNotImplemented, "strategy: keep_latest needs a checkpointer that prunes (%v)", err)
		}
		return false, err
	}
	subs := len(before) > 1
	if subs {
		kept, _, err := s.checkpointThreads(ctx, t.ID)
		if err != nil {
			return false, err
		}
		for _, sub := range before[1:] {
			if slices.Contains(kept, sub) {
				continue
			}
			if err := s.saver.DeleteThread(ctx, t.ID+sub); err != nil {
				return false, err
			}
		}
	}
	// The thread keeps fewer bytes (Config.MaxThreadBytes): counted
	// again, and its principal's sum read again at its next check.
	s.recordThreadBytes(ctx, t.ID, subs)
	s.forgetThreadBytes(cur.Owner)
	return p.Checkpoints > 0, nil
}

// --- thread state ---

var emptyState = map[string]any{"values": map[string]any{}, "next": []string{}, "tasks": []any{}, "metadata": nil,
	"created_at": nil, "checkpoint": nil, "parent_checkpoint": nil, "interrupts": []any{}}

func (s *Server) threadGraph(t *Thread) runner {
	if t.GraphID == "" {
		return nil
	}
	return s.graph(t.GraphID)
}

func (s *Server) getState(w http.ResponseWriter, r *http.Request) {
	sub, err := queryBool(r, "subgraphs", false)
	if err != nil {
		writeError(w, err)
		return
	}
	var sel []string
	for _, v := range r.URL.Query()["select"] {
		sel = append(sel, strings.Split(v, ",")...)
	}
	s.stateAt(w, r, r.PathValue("cid"), sub, sel)
}

// checkSubgraphs refuses subgraphs=true: this server shows no subgraph
// states (tasks[].state is null).
func checkSubgraphs(sub bool) error {
	if sub {
		return errorf(422, "subgraphs: this server does not show the states of subgraphs (tasks[].state is null); leave subgraphs out or false")
	}
	return nil
}

// check refuses a reference (nil is none) the server cannot follow: one
// into a subgraph's namespace, or to a thread other than tid, the
// path's; kept names what the server keeps of a thread's root graph, for
// the error.
func (c *checkpointRef) check(tid, kept string) error {
	switch {
	case c == nil:
		return nil
	case c.CheckpointNS != "" || len(c.CheckpointMap) > 0:
		return errorf(422, "checkpoint.checkpoint_ns: this server keeps the %s of a thread's root graph only; leave checkpoint_ns and checkpoint_map empty", kept)
	case c.ThreadID != "" && !sameUUID(c.ThreadID, tid):
		return errorf(422, "checkpoint.thread_id: %q is not the thread of the path; leave it out or give the same thread", clip(c.ThreadID))
	}
	return nil
}

func (s *Server) getStateAtCheckpoint(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Checkpoint   *checkpointRef `json:"checkpoint"`
		CheckpointID string         `json:"checkpoint_id"`
		Subgraphs    bool           `json:"subgraphs"`
		Select       []string       `json:"select"`
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	if err := body.Checkpoint.check(r.PathValue("tid"), "states"); err != nil {
		writeError(w, err)
		return
	}
	// Without a checkpoint the answer would be the latest state, which a
	// client that misplaced the id would take for the checkpoint's.
	if body.Checkpoint == nil {
		hint := "send {\"checkpoint\": {\"checkpoint_id\": ...}}, or GET /threads/{thread_id}/state for the latest state"
		if body.CheckpointID != "" {
			id, _ := json.Marshal(clip(body.CheckpointID))
			hint = "put checkpoint_id inside checkpoint: {\"checkpoint\": {\"checkpoint_id\": " + string(id) + "}}"
		}
		writeError(w, errorf(422, "checkpoint: required; %s", hint))
		return
	}
	s.stateAt(w, r, body.Checkpoint.CheckpointID, body.Subgraphs, body.Select)
}

// stateAt answers the thread's state at checkpoint cid ("" for the
// latest), with the fields sel selects (all when empty).
func (s *Server) stateAt(w http.ResponseWriter, r *http.Request, cid string, subgraphs bool, sel []string) {
	if err := checkCheckpointID("checkpoint_id", cid); err != nil {
		writeError(w, err)
		return
	}
	if err := checkSubgraphs(subgraphs); err != nil {
		writeError(w, err)
		return
	}
	fields, err := stateFields(sel)
	if err != nil {
		writeError(w, err)
		return
	}
	t, err := s.ownThread(r, r.PathValue("tid"))
	if err != nil {
		writeError(w, err)
		return
	}
	var st any = emptyState
	if g := s.threadGraph(t); g != nil && (cid != "" || !t.Rolled) {
		if cid == "" {
			cid = t.Head
		}
		got, err := g.state(r.Context(), t.ID, cid)
		if err != nil {
			writeError(w, err)
			return
		}
		if got != nil {
			st = got
		}
	}
	if fields == nil {
		writeJSON(w, 200, st)
		return
	}
	m, err := selectState(st, fields)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, m)
}

func (s *Server) postHistory(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Limit  *int            `json:"limit"`
		Before json.RawMessage `json:"before"`
		// Metadata's numbers are json.Number, compared by their exact
		// value as thread search compares them.
		Metadata jsonObject `json:"metadata"`
		// Checkpoint selects one checkpoint of the thread's root
		// namespace (the JS SDK sends the ref of a state it read).
		Checkpoint *checkpointRef `json:"checkpoint"`
		Select     []string       `json:"select"`
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	if err := checkStored("metadata", map[string]any(body.Metadata)); err != nil {
		writeError(w, err)
		return
	}
	if len(body.Metadata) > MaxFilterKeys {
		writeError(w, errorf(422, "metadata: filters on %d keys; give at most %d (MaxFilterKeys)", len(body.Metadata), MaxFilterKeys))
		return
	}
	for k, v := range body.Metadata {
		switch _, isNum := v.(json.Number); {
		case k == "step" && !isNum:
			writeError(w, errorf(422, "metadata.step: %s is not a number; give the super-step as a number", jsonText(v)))
			return
		case k != "step":
			if _, ok := v.(string); !ok {
				writeError(w, errorf(422, "metadata.%s: %s is not a string; a checkpoint's metadata holds step (a number) and string labels", k, jsonText(v)))
				return
			}
		}
	}
	q := historyQuery{limit: 10, metadata: body.Metadata}
	if body.Limit != nil {
		q.limit = *body.Limit
	}
	if len(body.Before) > 0 && string(body.Before) != "null" {
		// before is a checkpoint id, a checkpoint ({"checkpoint_id": ...},
		// what the Python SDK sends) or a config ({"configurable":
		// {"checkpoint_id": ...}}, what the JS SDK sends).
		var ref struct {
			CheckpointID string `json:"checkpoint_id"`
			Configurable struct {
				CheckpointID string `json:"checkpoint_id"`
			} `json:"configurable"`
		}
		if json.Unmarshal(body.Before, &q.before) != nil {
			if err := json.Unmarshal(body.Before, &ref); err != nil {
				writeError(w, errorf(422, "before: must be a checkpoint id, a checkpoint object or a config object"))
				return
			}
			q.before = cmp.Or(ref.CheckpointID, ref.Configurable.CheckpointID)
			if q.before == "" {
				writeError(w, errorf(422, `before: names no checkpoint; give {"checkpoint_id": ...} or {"configurable": {"checkpoint_id": ...}}, or leave before out for the latest checkpoints`))
				return
			}
		}
	}
	if err := body.Checkpoint.check(r.PathValue("tid"), "history"); err != nil {
		writeError(w, err)
		return
	}
	if c := body.Checkpoint; c != nil {
		switch {
		case c.CheckpointID != "" && q.before != "":
			writeError(w, errorf(422, "checkpoint.checkpoint_id: selects one checkpoint, which before cannot page; give one or the other"))
			return
		}
		q.checkpointID = c.CheckpointID
	}
	fields, err := stateFields(body.Select)
	if err != nil {
		writeError(w, err)
		return
	}
	s.history(w, r, q, fields)
}

// checkCheckpointID answers 422 for a checkpoint id, given as field, that
// is malformed: one no checkpointer stores (checkpoint.ValidateID: not
// UTF-8, a NUL character, longer than checkpoint.MaxIDLen), which the
// checkpointer would refuse as an invalid request (a 500). A malformed
// thread id is a 422 alike (canonUUID); only a well-formed checkpoint id
// the thread lacks is a 404. "" passes.
func checkCheckpointID(field, id string) error {
	if checkpoint.ValidateID("", field, id) != nil {
		return errorf(http.StatusUnprocessableEntity, "%s: %q is not a checkpoint id; checkpoint ids are UTF-8 text without NUL characters, at most %d bytes: give one of the thread's (its history lists them)", field, clip(id), checkpoint.MaxIDLen)
	}
	return nil
}

// jsonText is v as JSON, for an error message.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// stateFieldNames are the fields of a ThreadState, which a history's
// select may name.
var stateFieldNames = []string{"values", "next", "tasks", "metadata", "created_at", "checkpoint", "parent_checkpoint", "interrupts"}

// stateFields checks a select list of ThreadState fields, where
// values.<key> selects one key of the values; nil selects all.
func stateFields(sel []string) ([]string, error) {
	if err := checkSelectLen(sel); err != nil {
		return nil, err
	}
	for i, f := range sel {
		if k, ok := strings.CutPrefix(f, "values."); ok && k != "" {
			continue
		}
		if !slices.Contains(stateFieldNames, f) {
			return nil, errorf(422, "select[%d]: %q is not one of %s, or values.<key>", i, f, strings.Join(stateFieldNames, ", "))
		}
	}
	if len(sel) == 0 {
		return nil, nil
	}
	return sel, nil
}

func (s *Server) getHistory(w http.ResponseWriter, r *http.Request) {
	q := historyQuery{limit: 10, before: r.URL.Query().Get("before")}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			writeError(w, errorf(422, "limit: %q is not a number", v))
			return
		}
		q.limit = n
	}
	s.history(w, r, q, nil)
}

// history answers the thread's checkpoints that q selects, with the
// fields of each (all when nil).
func (s *Server) history(w http.ResponseWriter, r *http.Request, q historyQuery, fields []string) {
	if q.limit < 1 || q.limit > 1000 {
		writeError(w, errorf(422, "limit: %d is out of range; use 1 to 1000", q.limit))
		return
	}
	if err := checkCheckpointID("before", q.before); err != nil {
		writeError(w, err)
		return
	}
	if err := checkCheckpointID("checkpoint.checkpoint_id", q.checkpointID); err != nil {
		writeError(w, err)
		return
	}
	t, err := s.ownThread(r, r.PathValue("tid"))
	if err != nil {
		writeError(w, err)
		return
	}
	g := s.threadGraph(t)
	if g == nil || t.Rolled {
		writeJSON(w, 200, []any{})
		return
	}
	q.saver, q.head, q.maxBytes = s.saver, t.Head, s.responseBudget()
	if len(t.Values) > 0 {
		q.sizeHint = minStateSize + len(t.Values)
	}
	h, cut, err := g.history(r.Context(), t.ID, q)
	if err != nil {
		writeError(w, err)
		return
	}
	markTruncated(w, cut)
	if fields == nil {
		writeJSON(w, 200, h)
		return
	}
	out := make([]map[string]json.RawMessage, 0, len(h))
	for _, st := range h {
		m, err := selectState(st, fields)
		if err != nil {
			writeError(w, err)
			return
		}
		out = append(out, m)
	}
	writeJSON(w, 200, out)
}

// selectState returns the fields of a ThreadState st (a *threadState or
// emptyState) that stateFields checked: values.<key> gives the values
// with that key alone (all such selections merged into one values).
func selectState(st any, fields []string) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(fields))
	var vals, picked map[string]json.RawMessage
	for _, f := range fields {
		k, ok := strings.CutPrefix(f, "values.")
		if !ok {
			out[f] = all[f]
			continue
		}
		if vals == nil {
			vals = map[string]json.RawMessage{}
			_ = json.Unmarshal(all["values"], &vals) // values that are not an object have no key
			picked = map[string]json.RawMessage{}
		}
		if v, ok := vals[k]; ok {
			picked[k] = v
		}
	}
	if picked != nil {
		if _, whole := out["values"]; !whole {
			b, err := json.Marshal(picked)
			if err != nil {
				return nil, err
			}
			out["values"] = b
		}
	}
	return out, nil
}

func (s *Server) updateState(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Values       json.RawMessage `json:"values"`
		AsNode       string          `json:"as_node"`
		CheckpointID string          `json:"checkpoint_id"`
		Checkpoint   *checkpointSel  `json:"checkpoint"`
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	// The thread as it is under the lock: a run that ended, or a
	// rollback that landed, since a read before it moved its head.
	t, unlock, err := s.idleThread(r, r.PathValue("tid"), "updating the state")
	if err != nil {
		writeError(w, err)
		return
	}
	defer unlock()
	if err := s.checkThreadBytes(r.Context(), t.Owner); err != nil {
		writeError(w, err)
		return
	}
	g := s.threadGraph(t)
	if g == nil {
		writeError(w, errorf(409, "thread %s has no graph yet: run it once, or create it with metadata.graph_id", t.ID))
		return
	}
	// The checkpoint to update: the thread's current one (its latest,
	// or the one a rollback returned it to) unless the body names one
	// (checkpoint_id, or checkpoint.checkpoint_id), whose state the
	// update edits on a new branch of the thread.
	from := body.CheckpointID
	if from == "" && body.Checkpoint != nil {
		from = body.Checkpoint.CheckpointID
	}
	if err := checkCheckpointID("checkpoint_id", from); err != nil {
		writeError(w, err)
		return
	}
	if from == "" {
		// The thread's current state: the checkpoint a rollback returned
		// it to, not the latest (past it); a thread rolled back to
		// before its first checkpoint has none left (the rollback
		// deleted them), and the update is its first state.
		from = t.Head
	}
	id, err := g.update(r.Context(), t.ID, body.Values, body.AsNode, from)
	if err != nil {
		writeError(w, err)
		return
	}
	if t.Head != "" || t.Rolled {
		// The update's branch is now the thread's latest state.
		if _, err := s.store.UpdateThread(r.Context(), t.ID, func(t *Thread) error { t.Head, t.Rolled = "", false; return nil }); err != nil {
			writeError(w, err)
			return
		}
	}
	// The update is committed: the thread's refresh (and the count of
	// its bytes) is made even if the client goes, and this instance
	// reads the principal's sum again at its next check
	// (Config.MaxThreadBytes).
	rctx, cancel := s.recountContext(r.Context())
	defer cancel()
	err = s.refreshThread(rctx, t.ID, g, "", nil)
	s.forgetThreadBytes(t.Owner)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, map[string]any{"checkpoint": map[string]any{"thread_id": t.ID, "checkpoint_ns": "", "checkpoint_id": id}, "checkpoint_id": id})
}

// patchState sets the pairs of the body's metadata in the metadata of the
// thread's current checkpoint (its latest, or the one it was rolled back
// to), as LangGraph's PATCH /threads/{thread_id}/state does; the
// checkpoint and the history stay as they are. A checkpoint's metadata
// holds string labels beside step and source, which the server and the
// graph set: those two cannot be patched. It answers 204.
func (s *Server) patchState(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	if body.Metadata == nil {
		writeError(w, errorf(422, "metadata: required; give the labels to set, as {\"metadata\": {\"<key>\": \"<value>\"}}"))
		return
	}
	if err := checkStored("metadata", map[string]any(body.Metadata)); err != nil {
		writeError(w, err)
		return
	}
	md := make(map[string]string, len(body.Metadata))
	for k, v := range body.Metadata {
		str, ok := v.(string)
		switch {
		case k == "step" || k == graph.MetaSource || k == "parents":
			writeError(w, errorf(422, "metadata.%s: set by the server for each checkpoint; leave it out", k))
			return
		case k == jsonLabels:
			writeError(w, errorf(422, "metadata.%s: reserved: the server lists there the labels that hold a JSON value other than a string; leave it out", k))
			return
		case !ok:
			writeError(w, errorf(422, "metadata.%s: %s is not a string; a checkpoint's metadata holds string labels; send the value as a JSON string", k, jsonText(v)))
			return
		}
		md[k] = str
	}
	t, unlock, err := s.idleThread(r, r.PathValue("tid"), "patching the state")
	if err != nil {
		writeError(w, err)
		return
	}
	defer unlock()
	ctx := r.Context()
	g := s.threadGraph(t)
	cid := t.Head // the checkpoint a rollback returned the thread to
	if t.Rolled {
		cid = "" // rolled back to before its first checkpoint: no state
	} else if g != nil && cid == "" {
		if cid, _, err = g.latest(ctx, t.ID); err != nil {
			writeError(w, err)
			return
		}
	}
	if cid == "" {
		writeError(w, errorf(http.StatusConflict, "thread %s has no state to patch; run it, or give it a state with POST /threads/{thread_id}/state, first", t.ID))
		return
	}
	if err := unlistJSON(ctx, s.saver, t.ID, cid, md); err != nil {
		writeError(w, err)
		return
	}
	if err := checkpoint.PatchMetadata(ctx, s.saver, t.ID, cid, md); err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			err = errorf(http.StatusNotImplemented, "PATCH /threads/{thread_id}/state needs a checkpointer that patches metadata (%v)", err)
		}
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// unlistJSON adds to md, the labels a patch sets on checkpoint cid of
// thread tid, the checkpoint's jsonLabels without the keys md sets: their
// values are strings now, which reads must not decode as JSON text. It
// leaves md as it is when the checkpoint lists none of them.
func unlistJSON(ctx context.Context, saver checkpoint.Saver, tid, cid string, md map[string]string) error {
	snap, err := saver.Get(ctx, tid, cid)
	if err != nil {
		return err
	}
	js, ok := snap.Metadata[jsonLabels]
	if !ok {
		return nil
	}
	var keys []string
	_ = json.Unmarshal([]byte(js), &keys)
	kept := slices.DeleteFunc(keys, func(k string) bool { _, set := md[k]; return set })
	if len(kept) == len(keys) {
		return nil
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return err
	}
	md[jsonLabels] = string(b)
	return nil
}

// refreshThread copies the thread's latest state into its record and sets
// its status (section 7 of the API): error if the last run failed
// (failed), interrupted if the state has next tasks, busy if runs are
// pending, idle otherwise.
func (s *Server) refreshThread(ctx context.Context, id string, g runner, failed string, st *threadState, exclude ...string) error {
	_, err := s.refreshThreadAs(ctx, id, g, failed, false, false, st, exclude...)
	return err
}

// refreshThreadAs is refreshThread for a run that ended; cancelled says it
// was cancelled, which leaves the thread idle even with next tasks, and
// subgraphs that it saved checkpoints of durable subgraph threads.
func (s *Server) refreshThreadAs(ctx context.Context, id string, g runner, failed string, cancelled, subgraphs bool, st *threadState, exclude ...string) (active int, err error) {
	f, err := s.threadRefresh(ctx, id, g, failed, cancelled, subgraphs, st, exclude...)
	if err != nil {
		return 0, err
	}
	if rr, ok := s.store.(RunRecorder); ok {
		return rr.RefreshThread(ctx, id, f)
	}
	runs, err := s.activeRuns(ctx, id)
	if err != nil {
		return 0, err
	}
	runs = slices.DeleteFunc(runs, func(r *Run) bool { return slices.Contains(exclude, r.ID) })
	_, err = s.store.UpdateThread(ctx, id, func(t *Thread) error {
		f.Apply(t, len(runs))
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return 0, nil // deleted meanwhile
	}
	if err == nil && f.Sized {
		if c, ok := s.store.(ByteCounter); ok {
			if err := c.SetThreadBytes(ctx, id, f.Bytes, f.SubgraphBytes); err != nil {
				s.log.Warn("recording a thread's checkpoint bytes (Config.MaxThreadBytes); its count stays as it was until its next run ends", zapString("thread_id", id), zapError(err))
			}
		}
	}
	return len(runs), err
}

// threadRefresh returns the refresh of refreshThreadAs: the thread's
// state st, read from g when st is nil and g is not. With g, and
// Config.MaxThreadBytes on, the refresh carries the bytes the thread's
// checkpoints keep (Sized), its durable subgraphs' too with subgraphs; a
// failure to count them is logged, and leaves the stored counts as they
// are.
func (s *Server) threadRefresh(ctx context.Context, id string, g runner, failed string, cancelled, subgraphs bool, st *threadState, exclude ...string) (ThreadRefresh, error) {
	if st == nil && g != nil {
		var err error
		if st, err = g.state(ctx, id, ""); err != nil {
			return ThreadRefresh{}, err
		}
	}
	f := ThreadRefresh{Failed: failed != "", Cancelled: cancelled, Exclude: exclude, At: now()}
	if st != nil {
		f.State, f.Values, f.Interrupts, f.Next = true, st.Values, st.taskInterrupts(), len(st.Next) > 0
	}
	if g != nil {
		own, sub, ok, err := s.threadBytes(ctx, id, subgraphs)
		switch {
		case err != nil:
			s.log.Warn("counting a thread's checkpoint bytes (Config.MaxThreadBytes); its count stays as it was until its next run ends", zapString("thread_id", id), zapError(err))
		case ok:
			f.Sized, f.Bytes, f.SubgraphBytes = true, own, sub
		}
	}
	return f, nil
}

func (s *Server) activeRuns(ctx context.Context, threadID string) ([]*Run, error) {
	if l, ok := s.store.(ActiveRunLister); ok {
		return l.ActiveRuns(ctx, threadID)
	}
	running, err := s.store.Runs(ctx, RunQuery{ThreadID: threadID, Status: RunRunning})
	if err != nil {
		return nil, err
	}
	pending, err := s.store.Runs(ctx, RunQuery{ThreadID: threadID, Status: RunPending})
	if err != nil {
		return nil, err
	}
	return append(running, pending...), nil
}

// idleThread returns the principal's thread tid as it is under the
// thread's lock, which it holds until unlock is called, once the thread
// has no pending or running run: a busy thread is refused with 409
// naming its run and what to wait for before doing.
func (s *Server) idleThread(r *http.Request, tid, doing string) (t *Thread, unlock func(), err error) {
	if t, err = s.ownThread(r, tid); err != nil {
		return nil, nil, err
	}
	if unlock, err = s.locks.Lock(r.Context(), t.ID); err != nil {
		return nil, nil, err
	}
	active, err := s.activeRuns(r.Context(), t.ID)
	if err == nil && len(active) > 0 {
		err = errorf(http.StatusConflict, "thread %s is busy with run %s; wait for it or cancel it before %s", t.ID, active[0].ID, doing)
	}
	if err == nil {
		t, err = s.ownThread(r, t.ID) // as it is under the lock
	}
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return t, unlock, nil
}
