package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Assistant is an assistant a client created (POST /assistants): a
// configured variant of a registered graph, with its own config, context,
// metadata and name, kept in versions. The server's own assistants, one
// per registered graph (see [AssistantID]), are not stored.
type Assistant struct {
	ID      string `json:"assistant_id"`
	GraphID string `json:"graph_id"`
	// Owner is the principal that created the assistant: only it can see
	// or use the assistant.
	Owner string `json:"-"`
	// Config is the config its runs start from: config.configurable and
	// context are merged key by key under a run's own, tags are added
	// before the run's, and recursion_limit, max_concurrency and run_name
	// apply when the run gives none.
	Config   map[string]any `json:"config"`
	Context  map[string]any `json:"context"`
	Metadata map[string]any `json:"metadata"`
	// Version is the version this record is; as the assistant, the
	// version that is current (POST /assistants/{id}/latest).
	Version     int       `json:"version"`
	Name        string    `json:"name"`
	Description *string   `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// An AssistantStore is a [Store] that keeps the assistants clients create,
// each with every version of it. The server answers POST /assistants and
// the endpoints that change an assistant only with a store that is one,
// as the memory, SQLite and PostgreSQL stores are; with another, they
// answer 501 and the server has only its own assistants.
//
// The server bounds each principal's assistants by count and by bytes
// (Config.MaxAssistants, Config.MaxAssistantBytes), so the lists the
// methods return are bounded too.
type AssistantStore interface {
	// CreateAssistant saves a new assistant as its version a.Version;
	// ErrExists if its id is taken.
	CreateAssistant(ctx context.Context, a *Assistant) error
	// Assistant loads an assistant at its current version; ErrNotFound
	// if there is none.
	Assistant(ctx context.Context, id string) (*Assistant, error)
	// Assistants lists owner's assistants at their current versions,
	// oldest first.
	Assistants(ctx context.Context, owner string) ([]*Assistant, error)
	// UpdateAssistant loads the assistant at its current version, calls
	// fn on it and saves what fn left as a new version, one above the
	// highest the assistant has, that becomes current, atomically; fn's
	// error aborts the update and is returned. ErrNotFound if there is
	// no assistant.
	UpdateAssistant(ctx context.Context, id string, fn func(*Assistant) error) (*Assistant, error)
	// AssistantVersions lists every version of owner's assistant, newest
	// first; ErrNotFound if owner has no such assistant.
	AssistantVersions(ctx context.Context, owner, id string) ([]*Assistant, error)
	// SetAssistantVersion makes version the current version of owner's
	// assistant and returns the assistant at it; ErrNotFound if owner
	// has no such assistant, or it no such version.
	SetAssistantVersion(ctx context.Context, owner, id string, version int) (*Assistant, error)
	// DeleteAssistant deletes owner's assistant with its versions.
	// Deleting a missing assistant, or another owner's, is not an error
	// and changes nothing.
	DeleteAssistant(ctx context.Context, owner, id string) error
	// AssistantUsage returns how many assistants owner has, and the
	// bytes of all their versions as the store keeps them.
	AssistantUsage(ctx context.Context, owner string) (count int, bytes int64, err error)
}

// cloneAssistant copies a, so that callers never share a record with a
// store.
func cloneAssistant(a *Assistant) *Assistant {
	c := *a
	c.Config, c.Context, c.Metadata = cloneMap(a.Config), cloneMap(a.Context), cloneMap(a.Metadata)
	if a.Description != nil {
		d := *a.Description
		c.Description = &d
	}
	return &c
}

// assistantJSON is a's view in the API.
func assistantJSON(a *Assistant) map[string]any {
	var desc any
	if a.Description != nil {
		desc = *a.Description
	}
	obj := func(m map[string]any) map[string]any {
		if m == nil {
			return map[string]any{}
		}
		return m
	}
	return map[string]any{
		"assistant_id": a.ID, "graph_id": a.GraphID, "config": obj(a.Config), "context": obj(a.Context),
		"metadata": obj(a.Metadata), "version": a.Version, "name": a.Name, "description": desc,
		"created_at": stamp(a.CreatedAt), "updated_at": stamp(a.UpdatedAt),
	}
}

// assistantStore is the server's store as an AssistantStore, or the 501
// to answer when it is not one.
func (s *Server) assistantStore() (AssistantStore, error) {
	if as, ok := s.store.(AssistantStore); ok {
		return as, nil
	}
	return nil, errorf(http.StatusNotImplemented, "this server's Config.Store (%T) keeps no assistants (it is no AssistantStore); use the graphs' own assistants, or a store that keeps them (memory, SQLite, PostgreSQL)", s.store)
}

// errSystemAssistant is the refusal of a change to one of the server's own
// assistants.
func (s *Server) errSystemAssistant(id, graphID, what string) error {
	return errorf(http.StatusConflict, "assistant %s is the system assistant of graph %q, which the server makes for each registered graph; it cannot be %s. Create an assistant of the graph with POST /assistants and change that one", clip(id), graphID, what)
}

// userAssistant loads the assistant of id created by r's principal; nil
// and no error when id names none (another principal's included), or
// when the store keeps no assistants.
func (s *Server) userAssistant(ctx context.Context, who, id string) (*Assistant, error) {
	as, ok := s.store.(AssistantStore)
	if !ok {
		return nil, nil
	}
	cid, err := canonUUID("assistant_id", id)
	if err != nil {
		return nil, nil
	}
	a, err := as.Assistant(ctx, cid)
	if errors.Is(err, ErrNotFound) || err == nil && a.Owner != who {
		return nil, nil
	}
	return a, err
}

// lookupAssistant maps an assistant id or graph id to its graph, and to
// the principal's assistant when id names one of those (nil for the
// graph's own assistant).
func (s *Server) lookupAssistant(ctx context.Context, who, id string) (runner, *Assistant, error) {
	g, err := s.resolveAssistant(id)
	if err == nil {
		return g, nil, nil
	}
	a, aerr := s.userAssistant(ctx, who, id)
	if aerr != nil {
		return nil, nil, aerr
	}
	if a == nil {
		return nil, nil, err
	}
	g = s.graph(a.GraphID)
	if g == nil {
		return nil, nil, errorf(http.StatusNotFound, "assistant %s runs graph %q, which this server does not serve; register the graph, or use another assistant", a.ID, a.GraphID)
	}
	return assistantRunner{g, a.ID}, a, nil
}

// assistantRunner is the graph of a principal's assistant: its runs name
// the assistant, not the graph's own.
type assistantRunner struct {
	runner
	id string
}

func (a assistantRunner) assistantID() string { return a.id }

// assistantBody is the body of POST /assistants and PATCH
// /assistants/{id}.
type assistantBody struct {
	GraphID     string     `json:"graph_id"`
	AssistantID string     `json:"assistant_id"`
	Config      jsonObject `json:"config"`
	Context     jsonObject `json:"context"`
	Metadata    jsonObject `json:"metadata"`
	IfExists    string     `json:"if_exists"`
	Name        *string    `json:"name"`
	Description *string    `json:"description"`
}

// check refuses a body whose config its runs could not apply, or whose
// values no store holds alike.
func (b *assistantBody) check() error {
	if err := errors.Join(checkStored("config", map[string]any(b.Config)), checkStored("context", map[string]any(b.Context)),
		checkStored("metadata", map[string]any(b.Metadata))); err != nil {
		return err
	}
	if b.Name != nil {
		if err := checkNUL("name", *b.Name); err != nil {
			return err
		}
	}
	if b.Description != nil {
		if err := checkNUL("description", *b.Description); err != nil {
			return err
		}
	}
	if len(b.Config) == 0 {
		return nil
	}
	rc, err := assistantConfig(b.Config)
	if err != nil {
		return err
	}
	for k := range rc.Configurable {
		if slices.Contains(configReserved, k) {
			return errorf(422, "config.configurable.%s: set by the server for each run (or from its principal); leave it out of an assistant's config", k)
		}
	}
	return (&runCreate{Config: rc}).refuse()
}

// assistantConfig decodes an assistant's config as a run's.
func assistantConfig(cfg map[string]any) (*runConfig, error) {
	var rc runConfig
	if len(cfg) == 0 {
		return &rc, nil
	}
	b, err := json.Marshal(cfg)
	if err == nil {
		err = decodeNumbers(b, &rc)
	}
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, errorf(422, "config.%s: must be %s, not a JSON %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return nil, errorf(422, "config: %v; give tags, recursion_limit, max_concurrency, run_name and configurable as a run's config takes them", err)
	}
	return &rc, nil
}

// withAssistant merges the config and context of the run's assistant a
// under the run's own, as LangGraph's servers do: configurable and
// context key by key (the run's keys win), a's tags before the run's,
// and a's recursion_limit, max_concurrency and run_name where the run
// gives none.
func (b *runCreate) withAssistant(a *Assistant) error {
	ac, err := assistantConfig(a.Config)
	if err != nil {
		return err
	}
	if b.Config == nil {
		b.Config = &runConfig{}
	}
	c := b.Config
	if len(ac.Tags) > 0 {
		tags := slices.Clone(ac.Tags)
		for _, t := range c.Tags {
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
		c.Tags = tags
	}
	if c.RecursionLimit == nil {
		c.RecursionLimit = ac.RecursionLimit
	}
	if c.MaxConcurrency == nil {
		c.MaxConcurrency = ac.MaxConcurrency
	}
	if c.RunName == "" {
		c.RunName = ac.RunName
	}
	c.Configurable = under(ac.Configurable, c.Configurable)
	b.Context = under(cloneMap(a.Context), b.Context)
	b.GraphID = a.GraphID
	return nil
}

// under returns base with over's keys set over it (base itself when over
// is empty).
func under(base, over map[string]any) map[string]any {
	if len(base) == 0 {
		return over
	}
	for k, v := range over {
		base[k] = v
	}
	return base
}

// MaxAssistantVersions bounds the versions of one assistant: a PATCH
// /assistants/{id} that would make one more is refused with 429, so that
// listing an assistant's versions reads a bounded number of them.
const MaxAssistantVersions = 100

// assistantBytes is what one version of a takes, as the bound on a
// principal's assistants counts it (Config.MaxAssistantBytes): its JSON.
func assistantBytes(a *Assistant) int64 {
	b, _ := json.Marshal(a)
	return int64(len(b))
}

// checkAssistants refuses a principal's new assistant (n 1) or new
// version (n 0) of size bytes past Config.MaxAssistants or
// Config.MaxAssistantBytes.
func (s *Server) checkAssistants(ctx context.Context, as AssistantStore, who string, n int, size int64) error {
	count, bytes, err := as.AssistantUsage(ctx, who)
	if err != nil {
		return err
	}
	if n > 0 && count+n > s.cfg.MaxAssistants {
		return &requestError{status: http.StatusTooManyRequests, msg: fmt.Sprintf("%v: %d assistants exist for this principal (Config.MaxAssistants); delete some before creating more", ErrLimit, count)}
	}
	if bytes+size > s.cfg.MaxAssistantBytes {
		return &requestError{status: http.StatusTooManyRequests, msg: fmt.Sprintf("%v: this principal's assistants take %d bytes with their versions, and this one %d more (Config.MaxAssistantBytes is %d); delete assistants before adding more", ErrLimit, bytes, size, s.cfg.MaxAssistantBytes)}
	}
	return nil
}

// lockAssistants locks who's assistants (across instances when the store
// is a ThreadLocker) and returns the function that unlocks them: a check
// of Config.MaxAssistants or Config.MaxAssistantBytes and the write it
// admits are made under it, so that concurrent writes cannot pass the
// bounds together.
func (s *Server) lockAssistants(ctx context.Context, who string) (func(), error) {
	return s.locks.Lock(ctx, "assistants:"+who)
}

// registeredGraph refuses a graph_id naming no registered graph.
func (s *Server) registeredGraph(id string) error {
	if id == "" {
		return errorf(422, "graph_id: required; give the id of a registered graph (%s)", strings.Join(s.graphIDs(), ", "))
	}
	if s.graph(id) == nil {
		return errorf(http.StatusNotFound, "graph_id: graph %q is not registered on this server; use one of %s", clip(id), strings.Join(s.graphIDs(), ", "))
	}
	return nil
}

func (s *Server) createAssistant(w http.ResponseWriter, r *http.Request) {
	as, err := s.assistantStore()
	if err != nil {
		writeError(w, err)
		return
	}
	var body assistantBody
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	switch body.IfExists {
	case "", "raise", "do_nothing":
	default:
		writeError(w, errorf(422, "if_exists: %q is not one of raise, do_nothing", body.IfExists))
		return
	}
	if err := errors.Join(s.registeredGraph(body.GraphID), body.check()); err != nil {
		writeError(w, err)
		return
	}
	ctx, who := r.Context(), principal(r)
	if body.AssistantID == "" {
		body.AssistantID = newID()
	} else if body.AssistantID, err = canonUUID("assistant_id", body.AssistantID); err != nil {
		writeError(w, err)
		return
	}
	if g, err := s.resolveAssistant(body.AssistantID); err == nil {
		writeError(w, s.errSystemAssistant(body.AssistantID, g.graphID(), "created again; leave assistant_id out, or choose another"))
		return
	}
	if uuid.MustParse(body.AssistantID).Version() == 5 {
		// The form of AssistantID: the id of the system assistant of a
		// graph registered later, or on another instance, would name
		// two assistants.
		writeError(w, errorf(422, "assistant_id: %s is a version-5 UUID, the form of the server's own assistants (one per graph id); leave assistant_id out, or give a UUID of another version (4)", body.AssistantID))
		return
	}
	t := now()
	a := &Assistant{ID: body.AssistantID, GraphID: body.GraphID, Owner: who, Config: body.Config, Context: body.Context,
		Metadata: body.Metadata, Version: 1, Name: "Untitled", Description: body.Description, CreatedAt: t, UpdatedAt: t}
	if body.Name != nil {
		a.Name = *body.Name
	}
	if a.Config == nil {
		a.Config = map[string]any{}
	}
	if a.Context == nil {
		a.Context = map[string]any{}
	}
	if a.Metadata == nil {
		a.Metadata = map[string]any{}
	}
	// The count and the creation are made under a lock of the
	// principal's (across instances when the store is a ThreadLocker), so
	// that concurrent creations cannot pass the bounds together.
	unlock, err := s.lockAssistants(ctx, who)
	if err != nil {
		writeError(w, err)
		return
	}
	defer unlock()
	// An id that is taken is answered before the bounds are checked: a
	// principal at Config.MaxAssistants gets its own assistant back with
	// if_exists do_nothing.
	_, err = as.Assistant(ctx, a.ID)
	if err == nil {
		err = ErrExists
	} else if errors.Is(err, ErrNotFound) {
		if err = s.checkAssistants(ctx, as, who, 1, assistantBytes(a)); err == nil {
			err = as.CreateAssistant(ctx, a)
		}
	}
	if errors.Is(err, ErrExists) {
		old, oerr := s.userAssistant(ctx, who, a.ID)
		switch {
		case oerr != nil:
			writeError(w, oerr)
		case old == nil:
			// Another principal's: do not reveal it exists.
			writeError(w, errorf(http.StatusConflict, "assistant_id: %s cannot be used; choose another id", a.ID))
		case body.IfExists == "do_nothing":
			writeJSON(w, 200, assistantJSON(old))
		default:
			writeError(w, errorf(http.StatusConflict, "assistant %s already exists; set if_exists to do_nothing to get it instead", a.ID))
		}
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, assistantJSON(a))
}

// ownAssistant loads the principal's assistant of the request's path:
// for one of the server's own assistants, its graph and a nil assistant.
func (s *Server) ownAssistant(r *http.Request) (runner, *Assistant, error) {
	id := r.PathValue("id")
	g, a, err := s.lookupAssistant(r.Context(), principal(r), id)
	if err != nil {
		return nil, nil, err
	}
	return g, a, nil
}

func (s *Server) patchAssistant(w http.ResponseWriter, r *http.Request) {
	as, err := s.assistantStore()
	if err != nil {
		writeError(w, err)
		return
	}
	var body assistantBody
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	if body.AssistantID != "" || body.IfExists != "" {
		writeError(w, errorf(422, "assistant_id and if_exists: not taken by an update; the assistant is the one of the path"))
		return
	}
	if err := body.check(); err != nil {
		writeError(w, err)
		return
	}
	if body.GraphID != "" {
		if err := s.registeredGraph(body.GraphID); err != nil {
			writeError(w, err)
			return
		}
	}
	g, a, err := s.ownAssistant(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if a == nil {
		writeError(w, s.errSystemAssistant(r.PathValue("id"), g.graphID(), "changed"))
		return
	}
	ctx, who := r.Context(), principal(r)
	change := func(a *Assistant) {
		if body.GraphID != "" {
			a.GraphID = body.GraphID
		}
		if body.Config != nil {
			a.Config = body.Config
		}
		if body.Context != nil {
			a.Context = body.Context
		}
		if a.Metadata == nil {
			a.Metadata = map[string]any{}
		}
		for k, v := range body.Metadata {
			a.Metadata[k] = v
		}
		if body.Name != nil {
			a.Name = *body.Name
		}
		if body.Description != nil {
			a.Description = body.Description
		}
		a.UpdatedAt = now()
	}
	next := cloneAssistant(a)
	change(next)
	unlock, err := s.lockAssistants(ctx, who)
	if err != nil {
		writeError(w, err)
		return
	}
	defer unlock()
	if err := s.checkAssistants(ctx, as, who, 0, assistantBytes(next)); err != nil {
		writeError(w, err)
		return
	}
	if vs, err := as.AssistantVersions(ctx, who, a.ID); err != nil {
		writeError(w, err)
		return
	} else if len(vs) >= MaxAssistantVersions {
		writeError(w, &requestError{status: http.StatusTooManyRequests, msg: fmt.Sprintf("%v: assistant %s has %d versions (MaxAssistantVersions); delete it and create it again to change it further", ErrLimit, a.ID, len(vs))})
		return
	}
	up, err := as.UpdateAssistant(ctx, a.ID, func(cur *Assistant) error {
		if cur.Owner != who {
			return ErrNotFound
		}
		change(cur)
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		err = errorf(http.StatusNotFound, "assistant %s not found", a.ID)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, assistantJSON(up))
}

// deletePage and deletePageBytes bound a page of the threads DELETE
// /assistants/{id}?delete_threads=true reads at once.
const (
	deletePage      = 100
	deletePageBytes = 1 << 20
)

func (s *Server) deleteAssistant(w http.ResponseWriter, r *http.Request) {
	as, err := s.assistantStore()
	if err != nil {
		writeError(w, err)
		return
	}
	withThreads, err := queryBool(r, "delete_threads", false)
	if err != nil {
		writeError(w, err)
		return
	}
	g, a, err := s.ownAssistant(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if a == nil {
		writeError(w, s.errSystemAssistant(r.PathValue("id"), g.graphID(), "deleted"))
		return
	}
	ctx, who := r.Context(), principal(r)
	// The assistant goes first, so that no run of it starts a thread
	// while its threads are deleted.
	if err := as.DeleteAssistant(ctx, who, a.ID); err != nil {
		writeError(w, err)
		return
	}
	if withThreads {
		// The principal's threads whose metadata names the assistant (a
		// run of it sets assistant_id): at most Config.MaxThreads, found
		// in pages bounded by count and bytes, each deleted before the
		// next is read.
		q := ThreadQuery{Owner: who, Metadata: map[string]any{"assistant_id": a.ID}, Limit: deletePage, MaxBytes: deletePageBytes}
		for range s.cfg.MaxThreads/deletePage + 1 {
			ts, _, err := s.store.SearchThreads(ctx, q)
			if err != nil {
				writeError(w, err)
				return
			}
			if len(ts) == 0 {
				break
			}
			for _, t := range ts {
				err := s.removeThread(ctx, t.ID)
				s.forgetThreadBytes(who)
				if err != nil {
					writeError(w, err)
					return
				}
			}
		}
	}
	writeJSON(w, 200, []string{a.ID})
}

func (s *Server) assistantVersions(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Limit    *int       `json:"limit"`
		Offset   int        `json:"offset"`
		Metadata jsonObject `json:"metadata"`
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	switch {
	case body.Limit != nil && *body.Limit < 0 || body.Offset < 0:
		writeError(w, errorf(422, "limit and offset: must not be negative"))
		return
	case len(body.Metadata) > MaxFilterKeys:
		writeError(w, errorf(422, "metadata: filters on %d keys; give at most %d (MaxFilterKeys)", len(body.Metadata), MaxFilterKeys))
		return
	}
	if err := checkStored("metadata", map[string]any(body.Metadata)); err != nil {
		writeError(w, err)
		return
	}
	limit := 10
	if body.Limit != nil {
		limit = *body.Limit
	}
	g, a, err := s.ownAssistant(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var all []map[string]any
	if a == nil {
		all = append(all, s.assistant(g.graphID()))
	} else {
		as, err := s.assistantStore()
		if err != nil {
			writeError(w, err)
			return
		}
		vs, err := as.AssistantVersions(r.Context(), principal(r), a.ID)
		if err != nil {
			writeError(w, err)
			return
		}
		for _, v := range vs {
			all = append(all, assistantJSON(v))
		}
	}
	all = slices.DeleteFunc(all, func(v map[string]any) bool { return !containsAll(v["metadata"].(map[string]any), body.Metadata) })
	writeJSON(w, 200, page(all, body.Offset, limit))
}

func (s *Server) setLatestAssistant(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Version *int `json:"version"`
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	if body.Version == nil || *body.Version < 1 {
		writeError(w, errorf(422, "version: required, a version of the assistant from 1 (POST /assistants/{id}/versions lists them)"))
		return
	}
	g, a, err := s.ownAssistant(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if a == nil {
		if *body.Version != 1 {
			writeError(w, errorf(http.StatusNotFound, "version: the system assistant of graph %q has version 1 alone", g.graphID()))
			return
		}
		writeJSON(w, 200, s.assistant(g.graphID()))
		return
	}
	as, err := s.assistantStore()
	if err != nil {
		writeError(w, err)
		return
	}
	up, err := as.SetAssistantVersion(r.Context(), principal(r), a.ID, *body.Version)
	if errors.Is(err, ErrNotFound) {
		err = errorf(http.StatusNotFound, "version: assistant %s has no version %d; POST /assistants/{id}/versions lists its versions", a.ID, *body.Version)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, assistantJSON(up))
}

// executedGraph is the graph a stored run executes: its assistant's
// (runCreate.GraphID) for a run of a principal's assistant, else the one
// its assistant_id names.
func (s *Server) executedGraph(kw runCreate) (runner, error) {
	if kw.GraphID == "" {
		return s.resolveAssistant(kw.AssistantID)
	}
	g := s.graph(kw.GraphID)
	if g == nil {
		return nil, errorf(http.StatusNotFound, "assistant %s runs graph %q, which this server does not serve; register the graph on it", clip(kw.AssistantID), kw.GraphID)
	}
	return assistantRunner{g, kw.AssistantID}, nil
}
