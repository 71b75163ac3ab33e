package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"io"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// runCreate is the body of the run-creating endpoints (RunCreate).
type runCreate struct {
	AssistantID       string          `json:"assistant_id"`
	Input             json.RawMessage `json:"input,omitempty"`
	Command           *runCommand     `json:"command,omitempty"`
	Config            *runConfig      `json:"config,omitempty"`
	Context           map[string]any  `json:"context,omitempty"`
	Metadata          jsonObject      `json:"metadata,omitempty"`
	StreamMode        json.RawMessage `json:"stream_mode,omitempty"`
	StreamSubgraphs   bool            `json:"stream_subgraphs,omitempty"`
	StreamResumable   bool            `json:"stream_resumable,omitempty"`
	InterruptBefore   json.RawMessage `json:"interrupt_before,omitempty"`
	InterruptAfter    json.RawMessage `json:"interrupt_after,omitempty"`
	Checkpoint        *checkpointSel  `json:"checkpoint,omitempty"`
	CheckpointID      string          `json:"checkpoint_id,omitempty"`
	MultitaskStrategy string          `json:"multitask_strategy,omitempty"`
	IfNotExists       string          `json:"if_not_exists,omitempty"`
	OnDisconnect      string          `json:"on_disconnect,omitempty"`
	OnCompletion      string          `json:"on_completion,omitempty"`
	AfterSeconds      float64         `json:"after_seconds,omitempty"`
	// Webhook is POSTed the run's outcome when the run ends.
	Webhook string `json:"webhook,omitempty"`
	// Durability is sync, async or exit: when the run saves checkpoints.
	Durability string `json:"durability,omitempty"`
	// CheckpointDuring is the deprecated boolean Durability replaces:
	// true is async, false is exit.
	CheckpointDuring *bool `json:"checkpoint_during,omitempty"`
	// Temporary marks a stateless run's thread, deleted after the run
	// when OnCompletion is delete.
	Temporary bool `json:"temporary,omitempty"`
	// FeedbackKeys asks for LangSmith feedback, which this server does
	// not give: refused when set.
	FeedbackKeys json.RawMessage `json:"feedback_keys,omitempty"`
	// StrictResume refuses a command.resume that answers no interrupt
	// of the checkpoint the run starts from, instead of passing it on as
	// a value (see checkResume).
	StrictResume bool `json:"strict_resume,omitempty"`
	// GraphID is the graph of a run of a principal's assistant
	// (assistant_id names an Assistant), set by the server when the run
	// is created, with the assistant's config and context merged into
	// the request's: the run executes that graph, whatever becomes of the
	// assistant afterwards. Empty when assistant_id names a graph or its
	// own assistant.
	GraphID string `json:"graph_id,omitempty"`
	// Attached marks a run created by /stream or /wait, whose request
	// follows it to the end (and deletes a temporary thread).
	Attached bool `json:"attached,omitempty"`
	// modes is StreamMode parsed.
	modes []string
	// started is when the run started, for its webhook.
	started time.Time
	// log is the run's execution's event log (nil outside one), whose
	// last id the run's end passes to the store (RunEnd.Next).
	log *runLog
	// subgraphSaves, set by the run's execution when Config.MaxThreadBytes
	// is on, is set once the run saved a checkpoint (or writes) of a
	// durable subgraph thread: the run's end counts the thread's
	// subgraphs' bytes again (nil outside an execution).
	subgraphSaves *atomic.Bool
	// unwatch, set by newRun for an attached request, ends the hub watch
	// newRun took on the new run before any instance could start it, so
	// that the request's stream finds every event this instance appends
	// in the hub (see stream's fresh). watched is that watch's channel:
	// a change between newRun and the stream (a notification without
	// the event, from another instance) has closed it.
	unwatch func()
	watched <-chan struct{}
	// cancelled lists the runs the request's multitask_strategy
	// (interrupt or rollback) cancelled when the run was created: a run
	// refused afterwards, by Close, cannot bring them back, and its
	// refusal names them (refusedAfterCancel).
	cancelled []string
	// active is the run's place in its principal's gate and what it
	// counted (Config.MaxActiveRuns), zero when runs are not bounded:
	// admitRun checks the run against it.
	active activeTicket
	// madeThread is true once createRun made the thread of a stateless
	// run (Temporary): a failed creation then deletes it.
	madeThread bool
	// decoded is Input as the graph's Codec decoded it when the request
	// was checked (checkInput); nil for no input. createRun passes it to
	// a run created claimed (claimedRun.input), which starts with it.
	decoded any
}

type runCommand struct {
	Resume json.RawMessage `json:"resume,omitempty"`
	Update json.RawMessage `json:"update,omitempty"`
	Goto   json.RawMessage `json:"goto,omitempty"`
}

type runConfig struct {
	Tags         []string       `json:"tags,omitempty"`
	Configurable map[string]any `json:"configurable,omitempty"`
	// RecursionLimit bounds the run's super-steps (graph.WithStepLimit);
	// absent, the graph's own limit applies.
	RecursionLimit *int `json:"recursion_limit,omitempty"`
	// MaxConcurrency bounds how many tasks of one super-step run at once
	// (graph.WithMaxConcurrency); absent, the graph's own bound applies.
	MaxConcurrency *int `json:"max_concurrency,omitempty"`
	// RunName names the run, as LangGraph names its trace: kept in the
	// run's kwargs (GET .../runs/{run_id}), given to the graph's nodes
	// as run_name in graph.ConfigFrom(ctx).Metadata and kept in the
	// metadata of each checkpoint the run saves. A name with a NUL
	// character (\u0000) is refused with 422.
	RunName string `json:"run_name,omitempty"`
}

// MaxRecursionLimit is the largest config.recursion_limit a run may ask
// for.
const MaxRecursionLimit = 10000

// MaxConcurrencyLimit is the largest config.max_concurrency a run may ask
// for.
const MaxConcurrencyLimit = 1000

type checkpointSel struct {
	CheckpointID string `json:"checkpoint_id,omitempty"`
}

// streamModes are the stream modes the server serves.
var streamModes = []string{"values", "updates", "messages-tuple", "messages", "custom"}

// unservedModes are stream modes of LangGraph's servers that this one
// does not serve: a run asking for one is refused (422) rather than
// streamed without its events. events and tools are LangChain callback
// events, which the engine does not raise; debug, tasks and checkpoints
// need task inputs and results and each saved checkpoint, which its
// stream does not carry.
var unservedModes = []string{"events", "debug", "tasks", "checkpoints", "tools"}

// validate checks the body and fills in the defaults of the reference
// server: multitask_strategy enqueue, on_disconnect cancel.
func (b *runCreate) validate() error {
	if b.AssistantID == "" {
		return errorf(422, "assistant_id: required; give a graph id or an assistant id")
	}
	oneOf := func(field, v string, allowed ...string) error {
		if v != "" && !slices.Contains(allowed, v) {
			return errorf(422, "%s: %q is not one of %s", field, v, strings.Join(allowed, ", "))
		}
		return nil
	}
	if err := errors.Join(
		oneOf("multitask_strategy", b.MultitaskStrategy, "reject", "enqueue", "interrupt", "rollback"),
		oneOf("if_not_exists", b.IfNotExists, "reject", "create"),
		oneOf("on_disconnect", b.OnDisconnect, "cancel", "continue"),
		oneOf("on_completion", b.OnCompletion, "delete", "keep"),
		oneOf("durability", b.Durability, "sync", "async", "exit"),
	); err != nil {
		return err
	}
	if b.MultitaskStrategy == "" {
		b.MultitaskStrategy = "enqueue"
	}
	if b.OnDisconnect == "" {
		b.OnDisconnect = "cancel"
	}
	if b.OnCompletion == "" {
		b.OnCompletion = "delete"
	}
	if b.Durability == "" && b.CheckpointDuring != nil {
		b.Durability = map[bool]string{true: "async", false: "exit"}[*b.CheckpointDuring]
	}
	if b.AfterSeconds < 0 || b.AfterSeconds > 7*24*3600 {
		return errorf(422, "after_seconds: %v is out of range; use 0 to 604800", b.AfterSeconds)
	}
	modes, err := stringOrList("stream_mode", b.StreamMode)
	if err != nil {
		return err
	}
	if modes, err = checkModes(modes); err != nil {
		return err
	}
	if len(modes) == 0 {
		modes = []string{"values"}
	}
	b.modes = modes
	if _, err := stringOrList("interrupt_before", b.InterruptBefore); err != nil {
		return err
	}
	if _, err := stringOrList("interrupt_after", b.InterruptAfter); err != nil {
		return err
	}
	if b.Config != nil {
		// configurable is where LangGraph's servers merge a run's
		// checkpoint: honour a checkpoint given there.
		cid, _ := b.Config.Configurable["checkpoint_id"].(string)
		if cid != "" && b.CheckpointID == "" && (b.Checkpoint == nil || b.Checkpoint.CheckpointID == "") {
			b.CheckpointID = cid
		}
	}
	if b.Command != nil && len(b.Command.Resume) > 0 && len(b.Input) > 0 && string(b.Input) != "null" {
		return errorf(422, "input and command.resume: give one or the other, not both")
	}
	if b.Command != nil && (!isNull(b.Command.Update) || !isNull(b.Command.Goto)) && !isNull(b.Input) {
		return errorf(422, "input and command.update or command.goto: give one or the other, not both; a command.update writes the state as input would")
	}
	return nil
}

// configReserved are the keys of config.configurable the server reads or
// sets itself, not passed to RunContext from the request: the ids of the
// run and of its checkpoint, and the identity keys LangGraph's servers
// set from the authenticated user (identityKeys).
var configReserved = append([]string{"thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "run_id", "assistant_id", "graph_id"}, identityKeys...)

// identityKeys are the keys of a run's configurable that name its user;
// a client cannot set them. With Config.Authenticate, user_id and
// langgraph_auth_user_id are the run's principal.
var identityKeys = []string{"user_id", "langgraph_auth_user_id", "langgraph_auth_user", "langgraph_auth_permissions"}

// runContext is what RunContext gives the run's nodes: config.configurable
// (less the keys of configReserved) with the request's context over it
// (less identityKeys), as LangGraph passes a run's configurable to its
// nodes, then, for a run of an authenticated principal owner, user_id
// and langgraph_auth_user_id set to owner; nil when all are empty.
func (b *runCreate) runContext(owner string) map[string]any {
	m := make(map[string]any, len(b.Context)+2)
	if b.Config != nil {
		for k, v := range b.Config.Configurable {
			if !slices.Contains(configReserved, k) {
				m[k] = v
			}
		}
	}
	for k, v := range b.Context {
		if !slices.Contains(identityKeys, k) {
			m[k] = v
		}
	}
	if owner != "" {
		m["user_id"], m["langgraph_auth_user_id"] = owner, owner
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// checkBreakpoints refuses interrupt_before and interrupt_after naming a
// node the graph does not have, before a run is created that would only
// fail when it starts.
func checkBreakpoints(g runner, b *runCreate) error {
	var nodes []string
	for _, f := range []struct {
		field string
		raw   json.RawMessage
	}{{"interrupt_before", b.InterruptBefore}, {"interrupt_after", b.InterruptAfter}} {
		names, _ := stringOrList(f.field, f.raw) // validate checked the shape
		for i, n := range names {
			if n == "*" {
				continue
			}
			if nodes == nil {
				nodes = g.nodes()
			}
			if !slices.Contains(nodes, n) {
				return errorf(422, "%s[%d]: graph %q has no node %q; use one of %s, or \"*\" for all", f.field, i, g.graphID(), n, strings.Join(nodes, ", "))
			}
		}
	}
	return nil
}

// stringOrList parses a field that is a string or an array of strings.
func stringOrList(field string, raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if string(raw) == "[]" {
		return nil, nil
	}
	// A string starts with a quote: no failed decode (and its error)
	// for the common list.
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '"' {
		var one string
		if json.Unmarshal(raw, &one) == nil {
			return []string{one}, nil
		}
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errorf(422, "%s: must be a string or an array of strings", field)
	}
	return list, nil
}

func runJSON(r *Run) map[string]any {
	md := r.Metadata
	if md == nil {
		md = map[string]any{}
	}
	kw := r.Kwargs
	if len(kw) == 0 {
		kw = json.RawMessage("{}")
	}
	return map[string]any{"run_id": r.ID, "thread_id": r.ThreadID, "assistant_id": r.AssistantID, "created_at": stamp(r.CreatedAt),
		"updated_at": stamp(r.UpdatedAt), "status": r.Status, "metadata": md, "kwargs": kw, "multitask_strategy": r.MultitaskStrategy}
}

func runPath(r *Run, temporary bool) string {
	if temporary {
		return "/runs/" + r.ID
	}
	return "/threads/" + r.ThreadID + "/runs/" + r.ID
}

// errCancelled is the cause of a run cancelled by a client or by a
// double-texting strategy.
type errCancelled struct{ action string }

func (e errCancelled) Error() string { return "run cancelled (" + e.action + ")" }

// refuse refuses, when a run is created, the fields this server does not
// apply. A run stored before a refusal was added still executes (execute
// checks the stored request with validate alone).
func (b *runCreate) refuse() error {
	if err := checkStored("metadata", map[string]any(b.Metadata)); err != nil {
		return err
	}
	if err := refuseSet("feedback_keys", b.FeedbackKeys, "feedback needs LangSmith; leave feedback_keys out"); err != nil && string(b.FeedbackKeys) != "[]" {
		return err
	}
	if b.Config != nil {
		// The run's name is kept, with its metadata, in the labels of
		// each checkpoint the run saves, which hold no NUL either.
		if err := checkNUL("config.run_name", b.Config.RunName); err != nil {
			return err
		}
		c := b.Config.Configurable
		for _, k := range []string{"checkpoint_id", "checkpoint_ns"} {
			if v, ok := c[k]; ok && v != nil {
				if _, isStr := v.(string); !isStr {
					return errorf(422, "config.configurable.%s: %s is not a string; give the id as a string, or leave it out", k, jsonText(v))
				}
			}
		}
		if ns, _ := c["checkpoint_ns"].(string); ns != "" {
			return errorf(422, "config.configurable.checkpoint_ns: %q names a subgraph's checkpoint; runs start from the root graph's, leave it empty", ns)
		}
		if m, ok := c["checkpoint_map"]; ok && m != nil && !isEmptyObject(m) {
			return errorf(422, "config.configurable.checkpoint_map: names subgraphs' checkpoints; runs start from the root graph's checkpoint, leave checkpoint_map out")
		}
		if n := b.Config.RecursionLimit; n != nil && (*n < 1 || *n > MaxRecursionLimit) {
			return errorf(422, "config.recursion_limit: %d is out of range; use 1 to %d super-steps, or leave it out for the graph's own limit", *n, MaxRecursionLimit)
		}
		if n := b.Config.MaxConcurrency; n != nil && (*n < 1 || *n > MaxConcurrencyLimit) {
			return errorf(422, "config.max_concurrency: %d is out of range; use 1 to %d tasks at once, or leave it out for the graph's own bound", *n, MaxConcurrencyLimit)
		}
	}
	return nil
}

// isEmptyObject reports whether v is an empty JSON object.
func isEmptyObject(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

var errRunTimeout = errors.New("run exceeded Config.RunTimeout")

// errUnknownInterrupt is the cause of a strict resume (strict_resume)
// refused: it answers no interrupt the thread waits on.
var errUnknownInterrupt = errors.New("unknown interrupt")

// interruptIDs lists the ids of a thread's interrupts, by task.
func interruptIDs(byTask map[string][]Interrupt) []string {
	var ids []string
	for _, ins := range byTask {
		for _, in := range ins {
			ids = append(ids, in.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// checkResume is the check of a strict resume (strict_resume), given the
// ids of the interrupts the thread waits on: the thread must wait on one,
// and a resume that is an object is read as answers by interrupt id,
// every key of which must be one of pending. (A resume that is not
// strict passes an object naming no pending interrupt on as one value.)
// The error, a 422 wrapping errUnknownInterrupt, names both lists.
func checkResume(resume json.RawMessage, pending []string) error {
	if len(pending) == 0 {
		return &unknownInterrupt{msg: "command.resume: the thread waits on no interrupt (strict_resume); read its state, or leave strict_resume out"}
	}
	var byID map[string]json.RawMessage
	if t := bytes.TrimLeft(resume, " \t\r\n"); len(t) == 0 || t[0] != '{' || json.Unmarshal(resume, &byID) != nil {
		return nil // one value, for the interrupt waiting
	}
	var unknown []string
	for id := range byID {
		if !slices.Contains(pending, id) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) == 0 && len(byID) > 0 {
		return nil
	}
	if len(byID) == 0 {
		return &unknownInterrupt{msg: fmt.Sprintf("command.resume: {} answers no interrupt (strict_resume); the thread waits on %s: answer those by id, as {\"<interrupt id>\": value}", jsonText(pending))}
	}
	slices.Sort(unknown)
	return &unknownInterrupt{msg: fmt.Sprintf("command.resume: answers interrupts %s that the thread does not wait on (strict_resume); it waits on %s: answer those by id, as {\"<interrupt id>\": value}",
		jsonText(unknown), jsonText(pending))}
}

// unknownInterrupt is the error of checkResume: a requestError (422) that
// is errUnknownInterrupt.
type unknownInterrupt struct{ msg string }

func (e *unknownInterrupt) Error() string { return e.msg }
func (e *unknownInterrupt) Unwrap() []error {
	return []error{errUnknownInterrupt, &requestError{status: http.StatusUnprocessableEntity, msg: e.msg}}
}

// newRun validates a run request and creates the run, applying the
// thread's double-texting strategy. tid is "" for a stateless run;
// attached is true for a request that follows its run to the end
// (/stream and /wait).
func (s *Server) newRun(r *http.Request, tid string, attached bool) (*Run, *runCreate, error) {
	var body runCreate
	if err := decodeBody(r, &body); err != nil {
		return nil, nil, err
	}
	if err := errors.Join(body.validate(), body.refuse()); err != nil {
		return nil, nil, err
	}
	if err := s.checkWebhook(body.Webhook); err != nil {
		return nil, nil, err
	}
	body.GraphID = "" // set by the server only, from the assistant
	g, asst, err := s.lookupAssistant(r.Context(), principal(r), body.AssistantID)
	if err != nil {
		return nil, nil, err
	}
	if asst != nil {
		if err := body.withAssistant(asst); err != nil {
			return nil, nil, err
		}
	}
	decoded, ierr := g.checkInput(body.Input)
	body.decoded = decoded
	var cerr error
	if body.Command != nil {
		cerr = g.checkCommand(body.Command.Update, body.Command.Goto)
	}
	if err := errors.Join(checkBreakpoints(g, &body), ierr, cerr); err != nil {
		return nil, nil, err
	}
	ctx := r.Context()
	if body.StrictResume && body.Command != nil && len(body.Command.Resume) > 0 && tid != "" {
		// Refused before a run is made when the thread is not busy, so
		// that the thread stays as it was: against the interrupts of
		// the checkpoint the request names, else the thread's (those of
		// the checkpoint its next run starts from, the latest or the one
		// a rollback returned it to). A run queued behind others is
		// checked when it starts (runCall.strictResume), as is one
		// naming a checkpoint that cannot be read here.
		if t, err := s.ownThread(r, tid); err == nil && t.Status != ThreadBusy {
			ids, known := interruptIDs(t.Interrupts), true
			if cid := body.checkpointID(); cid != "" {
				st, err := g.state(ctx, t.ID, cid)
				ids, known = nil, err == nil
				if known {
					ids = interruptIDs(st.taskInterrupts())
				}
			}
			if known {
				if err := checkResume(body.Command.Resume, ids); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	if err := s.checkRunCheckpoint(r, tid, &body); err != nil {
		return nil, nil, err
	}
	if err := s.checkThreadBytes(ctx, principal(r)); err != nil {
		return nil, nil, err
	}
	body.Attached = attached
	body.Temporary = tid == "" // set by the server only: a client cannot make its thread temporary
	if !body.Temporary {
		// on_completion applies to a stateless run's thread only, as
		// with LangGraph, whose run kwargs do not keep it: a run on a
		// thread keeps its thread, and its kwargs do not say otherwise.
		body.OnCompletion = ""
	}
	if s.shut.Load() {
		// Closed since ServeHTTP checked: the run would not execute
		// here, and an attached request would wait on it for ever.
		return nil, nil, errClosing
	}
	if s.creating != nil {
		s.creating()
	}
	who := principal(r)
	if tid == "" {
		tid = newID() // its thread is made by createRun, once the run is known to fit
	} else if tid, err = canonUUID("thread_id", tid); err != nil {
		return nil, nil, err
	}
	run, claimed, err := s.createRun(ctx, tid, who, g, &body)
	if err != nil {
		if body.madeThread {
			s.dropTemporary(tid)
		}
		return nil, nil, err
	}
	if body.Attached {
		body.watched, body.unwatch = s.hub.watch(run.ID, run.ThreadID)
	}
	// The run is registered to start here (a worker, or a timer for a
	// delayed run) under s.mu, where Close sets closed: a Close since
	// the check above is seen here, and a Close after it finds the run
	// registered (and cancels it as it cancels the others).
	registered := true
	if claimed != nil {
		go s.workFrom(tid, claimed)
	} else if delay := time.Until(run.CreatedAt); delay > 0 {
		s.mu.Lock()
		if registered = !s.closed; registered {
			id := run.ID
			s.timers[id] = time.AfterFunc(delay, func() {
				s.mu.Lock()
				delete(s.timers, id)
				s.mu.Unlock()
				s.kick(tid)
			})
		}
		s.mu.Unlock()
	} else {
		registered = s.kick(tid)
	}
	if !registered && body.Attached {
		// Closed between the check and the registration: the run will
		// not start here, and the request would wait on it for ever. It
		// is removed, as if never created (its thread's record as
		// before, no webhook: a webhook's goroutine would start while
		// Close waits for them), and the request answered 503, as one
		// that came after Close: the client retries elsewhere, and no
		// run of its request executes meanwhile. A background run stays
		// pending, for another instance or the next start, as the runs
		// a closing server gives back.
		removed, err := s.unmakeRun(run)
		if err != nil {
			// Neither removed nor known claimed: it must not stay
			// pending with nothing to start it here, and no request
			// waits on it.
			body.unwatch()
			s.log.Error("removing a run refused while closing", zapString("run", run.ID), zapError(err))
			s.cancelRunByID(run, "interrupt")
			return nil, nil, refusedAfterCancel(&body, run.ID)
		}
		if !removed {
			// Claimed by another instance meanwhile: it runs there, and
			// the request waits on it, or streams it, as any other.
			return run, &body, nil
		}
		body.unwatch()
		if body.Temporary {
			if err := s.removeThread(s.bg, tid); err != nil {
				s.log.Error("deleting the thread of a stateless run refused while closing", zapString("thread", tid), zapError(err))
			}
		}
		return nil, nil, refusedAfterCancel(&body, "")
	}
	return run, &body, nil
}

// maxDrops bounds the deletions of dropTemporary that go on at once in
// the background; past it, a failed request waits for its own.
const maxDrops = 64

// dropTemporary deletes the thread made for a stateless run whose
// creation failed: no run of the request uses it, and no client knows its
// id to delete it. The deletion goes on in the background, so that the
// failed request is answered at once: the creation may have stored the
// run although it failed (its commit's answer lost), and another
// instance may have claimed it meanwhile; the deletion then waits, as
// removeThread does, for that instance to stop the run, up to a lease
// (Config.Lease) when that instance died. At most maxDrops deletions go
// on at once; past them the request waits for its own. A deletion is
// not cancelled with the request (whose end may be why the creation
// failed), nor by Close: Close ends its wait for a run of another
// instance, the thread is then deleted at once, and Close waits for the
// deletion, up to closedDropLeases leases after it (see closeBound).
// Once the server is closed, the request makes its deletion itself, up
// to closedDropLeases leases. A failure is logged: the thread then
// stays, with the run the creation may have stored.
func (s *Server) dropTemporary(tid string) {
	drop := func(ctx, patience context.Context) {
		if err := s.removeThreadWithin(ctx, patience, tid); err != nil {
			s.log.Error("deleting the thread of a stateless run whose creation failed; the thread stays (with the run, if the creation stored it), and counts toward Config.MaxThreads until deleted", zapString("thread", tid), zapError(err))
		}
	}
	s.mu.Lock()
	closed := s.closed
	background := !closed && s.drops < maxDrops
	if background {
		s.drops++
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if closed {
		// The server's context is cancelled: the deletion has its own.
		ctx, cancel := context.WithTimeout(s.bg, closedDropLeases*s.cfg.Lease)
		defer cancel()
		drop(ctx, nil)
		return
	}
	ctx, cancel := s.closeBound(closedDropLeases * s.cfg.Lease)
	if !background {
		defer cancel()
		drop(ctx, s.base)
		return
	}
	go func() {
		defer func() {
			cancel()
			s.mu.Lock()
			s.drops--
			s.mu.Unlock()
			s.wg.Done()
		}()
		drop(ctx, s.base)
	}()
}

// closeBound returns a context that Close does not cancel, but that ends
// d after Close (or when cancel is called): work that must not be left
// half done when the server closes, such as the deletion of a thread no
// client knows, goes on through Close, and Close, which waits for it,
// still returns.
func (s *Server) closeBound(d time.Duration) (ctx context.Context, cancel func()) {
	ctx, end := context.WithCancel(s.bg)
	stop := context.AfterFunc(s.base, func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			end()
		case <-ctx.Done():
		}
	})
	return ctx, func() { stop(); end() }
}

// closedDropLeases bounds, in leases (Config.Lease), the deletion
// dropTemporary makes once the server is closed: removeThread waits up
// to a lease for a run another instance claimed, then deletes anyway.
const closedDropLeases = 2

// maxListedRuns bounds the ids of cancelled runs a refusal lists (the
// count of the others follows), within maxDetail.
const maxListedRuns = 20

// refusedAfterCancel is errClosing for a run refused by Close after it
// was created. A cancellation its multitask_strategy made of the
// thread's runs (body.cancelled) is done (a running run was signalled,
// a pending one ended or deleted) and cannot be undone: the refusal says
// so, so that the client knows those runs were cancelled. A running run
// cancelled for a rollback is rolled back once it stops, here or by the
// instance that takes it over: the refusal says the rollback is asked,
// not done. kept, when not "", is the new run, which could not be
// removed: it was created, then interrupted.
func refusedAfterCancel(body *runCreate, kept string) error {
	if len(body.cancelled) == 0 && kept == "" {
		return errClosing
	}
	var b strings.Builder
	b.WriteString(errClosing.msg)
	if kept != "" {
		fmt.Fprintf(&b, "; the run %s was created, then interrupted (removing it failed)", kept)
	} else {
		b.WriteString("; the run was not created")
	}
	if n := len(body.cancelled); n > 0 {
		done := "interrupted"
		if body.MultitaskStrategy == "rollback" {
			done = "cancelled (rollback asked: each is rolled back and deleted once it stops, here or by the instance that takes it over)"
		}
		ids := body.cancelled[:min(n, maxListedRuns)]
		fmt.Fprintf(&b, ", but its multitask_strategy %s had already cancelled the thread's runs %s", body.MultitaskStrategy, strings.Join(ids, ", "))
		if n > len(ids) {
			fmt.Fprintf(&b, " and %d more (%d in all)", n-len(ids), n)
		}
		fmt.Fprintf(&b, ", which stay %s", done)
	}
	return &requestError{status: http.StatusServiceUnavailable, name: errClosing.name, msg: b.String()}
}

// unmakeRun removes a pending run a closing server will not start, under
// its thread's lock, and brings the thread's record back as if the run
// had never been created (the thread's record first, as a rollback does).
// It reports whether the run is gone: removed here, or not found. A run
// another instance claimed meanwhile is left to it, and unmakeRun reports
// false with a nil error.
func (s *Server) unmakeRun(run *Run) (removed bool, err error) {
	bg := s.bg
	unlock, err := s.locks.Lock(bg, run.ThreadID)
	if err != nil {
		return false, fmt.Errorf("removing run %s, refused while the server closes: %w", run.ID, err)
	}
	defer unlock()
	defer s.hub.notify(run.ID)
	cur, err := s.store.Run(bg, run.ID)
	if errors.Is(err, ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("removing run %s, refused while the server closes: %w", run.ID, err)
	}
	if cur.Status != RunPending || cur.Worker != "" {
		return false, nil // claimed elsewhere: it runs there
	}
	if err := s.refreshThread(bg, run.ThreadID, nil, "", nil, run.ID); err != nil && !errors.Is(err, ErrNotFound) {
		return false, fmt.Errorf("removing run %s, refused while the server closes: %w", run.ID, err)
	}
	if err := s.store.DeleteRun(bg, run.ID); err != nil && !errors.Is(err, ErrNotFound) {
		_ = s.refreshThread(bg, run.ThreadID, nil, "", nil)
		return false, fmt.Errorf("removing run %s, refused while the server closes: %w", run.ID, err)
	}
	return true, nil
}

// A claimedRun is a run created claimed by this instance (see
// RunClaimer), to execute as claim returns a run: its thread as the
// creation left it, and its context, whose cancel function is
// registered in Server.cancel.
type claimedRun struct {
	run    *Run
	thread *Thread
	ctx    context.Context
	cancel context.CancelCauseFunc
	// input is the run's input as the graph's Codec decoded it at the
	// run's creation (runCreate.decoded), so that the run starts without
	// decoding it again; nil for a run claimed from the store, which
	// decodes its stored input.
	input any
}

// createRun creates the run of body on thread tid under the thread's
// lock, applying the thread's double-texting strategy, and, for a
// stateless run (body.Temporary), makes its thread first. With a
// LockingRecorder it first tries the store's one transaction that takes
// the store's lock, reads the thread and creates the run (see
// admitRun); when the lock is held elsewhere, or the strategy must
// cancel active runs or the thread must be created, it takes the lock
// and creates the run as without one. With a RunClaimer, a run that
// will run here at once is created claimed (see reserveWorker): it is
// returned with its claimedRun, for the caller to execute with workFrom
// instead of kicking the thread.
//
// The principal's active runs are counted, and the run created, within
// its gate (Config.MaxActiveRuns; see active.go), which createRun enters
// once it holds the thread's locks and leaves before it waits for one:
// a creation never waits for a thread's lock with a place in the gate,
// so that creations queued on a busy thread keep no other thread of
// their principal waiting, and a creation in the gate waits for no lock
// (its own thread's are held), so that an exclusive recount, which
// waits with the thread's locks held for the gate to empty, cannot wait
// on itself across threads or instances.
func (s *Server) createRun(ctx context.Context, tid, who string, g runner, body *runCreate) (*Run, *claimedRun, error) {
	tk := &body.active
	defer tk.leave() // the run is created (or not): it counts in the store now
	lr, ok := s.store.(LockingRecorder)
	if !ok {
		unlock, err := s.locks.Lock(ctx, tid)
		if err != nil {
			return nil, nil, err
		}
		defer unlock()
		run, err := s.createRunGated(ctx, tid, who, g, body)
		return run, nil, err
	}
	unlock, err := s.locks.local.Lock(ctx, tid)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	rc, claims := lr.(RunClaimer)
	// A CountingClaimer counts the principal's active runs in the
	// creation's read (a stateless run's count is checked before the
	// creation, in enterGate).
	cc, inRead := lr.(CountingClaimer)
	inRead = inRead && !body.Temporary
	if err := s.enterGate(ctx, tid, who, g, body, inRead); err != nil {
		return nil, nil, err
	}
	var run *Run
	var thread *Thread
	reserved := false
	plan := func(t *Thread, active []*Run) (*Run, string, map[string]any, error) {
		if t == nil && body.IfNotExists == "create" {
			return nil, "", nil, nil // the thread is created under the lock
		}
		if err := s.admitRun(tid, who, g, body, t, active); err != nil {
			return nil, "", nil, err
		}
		if len(active) > 0 && (body.MultitaskStrategy == "interrupt" || body.MultitaskStrategy == "rollback") {
			return nil, "", nil, nil // the active runs are cancelled under the lock
		}
		var err error
		if run, err = s.pendingRun(tid, who, g, body); err != nil {
			return nil, "", nil, err
		}
		// Idempotent, should a store call plan again: a reservation
		// made stays with a run created claimed, or is undone.
		if claims && len(active) == 0 && body.AfterSeconds <= 0 && (reserved || s.reserveWorker(tid)) {
			// t holds what CreateRunLocked's plan reads of a thread
			// (execute reads its ID, Head, Rolled and Metadata).
			reserved, thread = true, t
			run.Status, run.Worker, run.Attempt, run.LeaseUntil = RunRunning, s.cfg.Worker, 1, run.UpdatedAt.Add(s.cfg.Lease)
		} else if reserved {
			reserved = false
			s.unreserveWorker(tid)
		}
		return run, g.graphID(), busyMetadata(g.graphID(), run.AssistantID), nil
	}
	create := func() (created bool, err error) {
		if tk.inRead { // only with a CountingClaimer (inRead above), for a bounded principal
			created, err = cc.CreateRunClaimedCountActive(ctx, tid, who, s.cfg.Lease, func(t *Thread, active []*Run, activeRuns int) (*Run, string, map[string]any, error) {
				tk.n = activeRuns
				return plan(t, active)
			})
		} else if claims {
			created, err = rc.CreateRunClaimedLocked(ctx, tid, s.cfg.Lease, plan)
		} else {
			created, err = lr.CreateRunLocked(ctx, tid, plan)
		}
		if reserved && !created && err != nil && !errors.Is(err, ErrThreadLocked) {
			// The commit may have been applied although the call failed (the
			// client hung up while it was sent): a run stored claimed by
			// this instance is executed here, not left to its lease.
			if r, rerr := s.store.Run(s.bg, run.ID); rerr == nil && r.Status == RunRunning && r.Worker == s.cfg.Worker {
				created, err = true, nil
			}
		}
		if reserved && !created {
			reserved = false
			s.unreserveWorker(tid)
		}
		return created, err
	}
	created, err := create()
	if !created && errors.Is(err, errRecount) {
		if err = tk.recount(ctx); err == nil {
			created, err = create()
		}
	}
	switch {
	case created && reserved:
		// Claimed at its creation: registered under the thread's local
		// lock, as claim registers a run it claims.
		c := &claimedRun{run: run, thread: busyThread(thread, run, g.graphID()), input: body.decoded}
		c.ctx, c.cancel = context.WithCancelCause(s.base)
		s.mu.Lock()
		if s.closed {
			// Closing: the run goes back to pending, for another
			// instance (or this one's next start), as sweep gives
			// back the runs it claims while closing.
			s.mu.Unlock()
			c.cancel(nil)
			s.release(run, errors.New("server closing"), 0)
			s.mu.Lock()
			delete(s.work, tid)
			delete(s.again, tid)
			s.wg.Done() // after the release: Close waits for it
			s.mu.Unlock()
			run.Status, run.Worker, run.Attempt, run.LeaseUntil = RunPending, "", 0, time.Time{}
			return run, nil, nil
		}
		s.cancel[run.ID] = &runCancel{ctx: c.ctx, cancel: c.cancel}
		s.mu.Unlock()
		return run, c, nil
	case created:
		return run, nil, nil
	case err != nil && !errors.Is(err, ErrThreadLocked):
		return nil, nil, err
	}
	// The store's lock is waited for out of the gate, which is entered
	// again (counting again) once it is held.
	tk.leave()
	unlockStore, err := lr.LockThread(ctx, tid)
	if err != nil {
		return nil, nil, err
	}
	defer unlockStore()
	run, err = s.createRunGated(ctx, tid, who, g, body)
	return run, nil, err
}

// enterGate enters the principal's gate for the run of body on thread
// tid, whose locks the caller holds, and counts the principal's active
// runs (see enterActive), unless inRead: the creation's read counts them
// then ([CountingClaimer]; the caller passes false for a stateless run).
// A stateless run's count is checked here, so that a refusal leaves no
// thread, and its thread made if it is not yet.
func (s *Server) enterGate(ctx context.Context, tid, who string, g runner, body *runCreate, inRead bool) error {
	tk := &body.active
	if err := s.enterActive(ctx, tk, who, false, inRead); err != nil {
		return err
	}
	if !body.Temporary {
		return nil
	}
	err := tk.check(0)
	if errors.Is(err, errRecount) {
		if err = tk.recount(ctx); err == nil {
			err = tk.check(0)
		}
	}
	if err != nil {
		return err
	}
	tk.decided() // its new thread has no run to replace
	if body.madeThread {
		return nil
	}
	t := &Thread{ID: tid, Owner: who, CreatedAt: now(), Status: ThreadIdle, GraphID: g.graphID(),
		Metadata: map[string]any{"graph_id": g.graphID(), "assistant_id": g.assistantID()}}
	t.UpdatedAt = t.CreatedAt
	if err := s.saveThread(ctx, t); err != nil {
		return err
	}
	body.madeThread = true
	return nil
}

// createRunGated is createRunLocked within the principal's gate, which
// it enters (the caller holds the thread's locks), counting again
// exclusively when the run fits by the count alone.
func (s *Server) createRunGated(ctx context.Context, tid, who string, g runner, body *runCreate) (*Run, error) {
	if err := s.enterGate(ctx, tid, who, g, body, false); err != nil {
		return nil, err
	}
	run, err := s.createRunLocked(ctx, tid, who, g, body)
	if errors.Is(err, errRecount) {
		if err = body.active.recount(ctx); err == nil {
			run, err = s.createRunLocked(ctx, tid, who, g, body)
		}
	}
	return run, err
}

// reserveWorker makes this instance the thread's worker for a run about
// to be created claimed, as kick does for a worker goroutine to come:
// false, reserving nothing, when the server is closing or a worker of
// the thread is still running (that worker then claims the run once
// kicked, as without a RunClaimer). The caller executes the run with
// workFrom, or calls unreserveWorker if the run was not created.
func (s *Server) reserveWorker(tid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.work[tid] {
		return false
	}
	s.work[tid] = true
	s.wg.Add(1)
	return true
}

// unreserveWorker undoes reserveWorker for a run that was not created,
// and kicks the thread if it was kicked meanwhile; once the server is
// closed it wakes the waiters of the thread's runs, as a worker's end
// does (workerEnds).
func (s *Server) unreserveWorker(tid string) {
	s.mu.Lock()
	again := s.again[tid]
	delete(s.work, tid)
	delete(s.again, tid)
	closed := s.closed
	s.wg.Done()
	s.mu.Unlock()
	if closed {
		s.hub.notifyThread(tid)
	}
	if again {
		s.kick(tid)
	}
}

// busyThread returns thread t as the creation of run (running graphID)
// left it: busy, updated at the run's creation, with the run's graph in
// its GraphID and its metadata (CreateRunBusy's changes).
func busyThread(t *Thread, run *Run, graphID string) *Thread {
	c := *t
	c.Status, c.UpdatedAt, c.GraphID = ThreadBusy, run.UpdatedAt, graphID
	c.Metadata = make(map[string]any, len(t.Metadata)+2)
	for k, v := range t.Metadata {
		c.Metadata[k] = v
	}
	c.Metadata["graph_id"], c.Metadata["assistant_id"] = graphID, run.AssistantID // busyMetadata's
	return &c
}

// admitRun refuses a new run of body on thread t (nil when missing)
// with active runs: a thread that is missing or not who's, that runs
// another graph, whose queue is full (enqueue) or that is busy
// (reject), and a run past the principal's Config.MaxActiveRuns (or
// errRecount, for newRun to count again; see active.go).
func (s *Server) admitRun(tid, who string, g runner, body *runCreate, t *Thread, active []*Run) error {
	if t != nil && t.Owner != who && body.IfNotExists == "create" {
		// Another principal's thread, which the run asked to create: the
		// id cannot be used, as POST /threads answers; not "set
		// if_not_exists", which the request did, nor that it exists.
		return errorf(http.StatusConflict, "thread_id: %s cannot be used; choose another id", tid)
	}
	if t == nil || t.Owner != who {
		return errorf(http.StatusNotFound, "thread %s not found; create it first, or set if_not_exists to create", tid)
	}
	if t.GraphID != "" && t.GraphID != g.graphID() {
		return errorf(http.StatusConflict, "assistant_id: thread %s runs graph %q, not %q; use a new thread for another graph", tid, t.GraphID, g.graphID())
	}
	if body.MultitaskStrategy == "enqueue" {
		if err := s.checkQueue(tid, active); err != nil {
			return err
		}
	}
	if len(active) > 0 && body.MultitaskStrategy == "reject" {
		return errorf(http.StatusConflict, "thread %s is busy with run %s (multitask_strategy reject); wait for it, or use enqueue, interrupt or rollback", tid, active[0].ID)
	}
	// The principal's bound last: a run that interrupts or rolls back the
	// thread's active runs replaces them (they are the principal's, and
	// end once they stop), so it fits where they make room.
	replaced := 0
	if body.MultitaskStrategy == "interrupt" || body.MultitaskStrategy == "rollback" {
		replaced = len(active)
	}
	return body.active.check(replaced)
}

// pendingRun returns the new pending run of body on thread tid.
func (s *Server) pendingRun(tid, who string, g runner, body *runCreate) (*Run, error) {
	kw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	created := now()
	md := map[string]any{}
	for k, v := range body.Metadata {
		md[k] = v
	}
	return &Run{ID: newID(), ThreadID: tid, AssistantID: g.assistantID(), CreatedAt: created.Add(time.Duration(body.AfterSeconds * float64(time.Second))),
		UpdatedAt: created, Status: RunPending, Metadata: md, Kwargs: kw, MultitaskStrategy: body.MultitaskStrategy, Owner: who}, nil
}

// busyMetadata is the metadata a run adds to its thread.
func busyMetadata(graphID, assistantID string) map[string]any {
	return map[string]any{"graph_id": graphID, "assistant_id": assistantID}
}

// createRunLocked creates the run of body on thread tid; the caller holds
// the thread's lock. It creates the thread when body asks it, and
// cancels the thread's active runs when the strategy says so (listing
// them in body.cancelled).
func (s *Server) createRunLocked(ctx context.Context, tid, who string, g runner, body *runCreate) (*Run, error) {
	// The thread and its active runs, in one call when the store is a
	// RunRecorder (known is then true).
	var t *Thread
	var active []*Run
	var err error
	known := false
	if rr, ok := s.store.(RunRecorder); ok {
		t, active, err = rr.ThreadActive(ctx, tid)
		known = err == nil
	} else {
		t, err = s.store.Thread(ctx, tid)
	}
	switch {
	case errors.Is(err, ErrNotFound) && body.IfNotExists == "create":
		// The principal's bound first, so that a refused run makes no
		// thread: the new thread has no run to replace.
		if err := body.active.check(0); err != nil {
			return nil, err
		}
		nt := &Thread{ID: tid, Owner: who, CreatedAt: now(), Status: ThreadIdle, Metadata: map[string]any{}}
		nt.UpdatedAt = nt.CreatedAt
		if err := s.saveThread(ctx, nt); err != nil {
			// The thread may have been created meanwhile (POST /threads
			// takes no thread lock): that shows as ErrExists, or as the
			// principal's thread limit reached by that very thread. The
			// run goes on it as on a thread that existed, if it is who's.
			got, rerr := s.store.Thread(ctx, tid)
			switch {
			case errors.Is(rerr, ErrNotFound):
				return nil, err
			case rerr != nil:
				return nil, rerr
			}
			t, known = got, false
		} else {
			t = nt
			body.active.decided() // checked above, with no run to replace
		}
	case errors.Is(err, ErrNotFound):
		t = nil
	case err != nil:
		return nil, err
	}
	if !known && t != nil {
		if active, err = s.activeRuns(ctx, tid); err != nil {
			return nil, err
		}
	}
	if err := s.admitRun(tid, who, g, body, t, active); err != nil {
		return nil, err
	}
	if len(active) > 0 && (body.MultitaskStrategy == "interrupt" || body.MultitaskStrategy == "rollback") {
		for _, a := range active {
			if err := s.cancelLocked(ctx, a, body.MultitaskStrategy); err != nil {
				return nil, err
			}
			body.cancelled = append(body.cancelled, a.ID)
		}
	}
	run, err := s.pendingRun(tid, who, g, body)
	if err != nil {
		return nil, err
	}
	if err := s.createRunBusy(ctx, run, g.graphID()); err != nil {
		return nil, err
	}
	return run, nil
}

// createRunBusy saves the new run and marks its thread busy running
// graphID, in one call when the store is a RunRecorder.
func (s *Server) createRunBusy(ctx context.Context, run *Run, graphID string) error {
	md := busyMetadata(graphID, run.AssistantID)
	if rr, ok := s.store.(RunRecorder); ok {
		return rr.CreateRunBusy(ctx, run, graphID, md)
	}
	if err := s.store.CreateRun(ctx, run); err != nil {
		return err
	}
	_, err := s.store.UpdateThread(ctx, run.ThreadID, func(t *Thread) error {
		t.Status, t.UpdatedAt, t.GraphID = ThreadBusy, run.UpdatedAt, graphID
		if t.Metadata == nil {
			t.Metadata = map[string]any{}
		}
		for k, v := range md {
			t.Metadata[k] = v
		}
		return nil
	})
	return err
}

// cancelLocked cancels run a with action interrupt or rollback. The caller
// holds the thread's lock. A pending run ends at once; a running one is
// signalled and ends when its graph stops.
func (s *Server) cancelLocked(ctx context.Context, a *Run, action string) error {
	_, err := s.cancelEnds(ctx, a, action)
	return err
}

// cancelEnds is cancelLocked that also reports whether the run ended
// here (a pending run interrupted or deleted), not only signalled or
// asked of the instance that runs it: a pending run claimed meanwhile by
// another instance is running there.
func (s *Server) cancelEnds(ctx context.Context, a *Run, action string) (ended bool, err error) {
	s.mu.Lock()
	rc := s.cancel[a.ID]
	if t := s.timers[a.ID]; t != nil {
		t.Stop()
		delete(s.timers, a.ID)
	}
	s.mu.Unlock()
	if rc != nil {
		rc.cancel(errCancelled{action: action})
		return false, nil
	}
	// Running on another instance: ask it.
	if asked, err := s.askCancel(ctx, a.ID, action); asked || err != nil {
		return false, err
	}
	if action == "rollback" {
		err = s.store.DeleteRun(ctx, a.ID)
	} else {
		interrupted := false
		var cur *Run
		cur, err = s.store.UpdateRun(ctx, a.ID, func(r *Run) error {
			if r.Status == RunPending {
				r.Status, r.UpdatedAt = RunInterrupted, now()
				interrupted = true
			}
			return nil
		})
		gone := errors.Is(err, ErrNotFound)
		if gone {
			err = nil
		}
		var kw runCreate
		if interrupted && err == nil && json.Unmarshal(a.Kwargs, &kw) == nil && kw.Webhook != "" {
			s.sendWebhook(a.ID, cur, nil, kw)
		}
		// A run no longer pending (claimed by another instance since
		// it was read, or ended) did not end here.
		ended = err == nil && (interrupted || gone)
		s.hub.notify(a.ID)
		return ended, err
	}
	s.hub.notify(a.ID)
	return err == nil, err
}

// workerStack is the stack a worker goroutine takes at its start, in
// bytes: about what a run of a small graph on PostgreSQL reaches (its
// JSON decoding, the store's driver, the graph's step). A goroutine
// starts with a small stack, and grows it by copying it, and every frame
// on it, to one twice its size each time it fills; a run grew its worker
// three or four times, each copy deeper than the last. Growing it once at
// the start, when it holds one frame, costs a copy of that frame. A
// worker's stack then holds workerStack bytes more than its first frames:
// the runtime rounds it up to the next power of two, 64 KiB.
const workerStack = 32 << 10

// growStack grows the calling goroutine's stack to hold workerStack bytes
// more than it holds.
//
//go:noinline
func growStack() {
	var b [workerStack]byte
	keepStack(b[:])
}

// keepStack keeps growStack's array, which it does not let escape.
//
//go:noinline
func keepStack(b []byte) { b[len(b)-1] = 0 }

// kick makes sure a worker goroutine runs the thread's pending runs. It
// reports false, starting nothing, when the server is closed.
func (s *Server) kick(tid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.work[tid] {
		s.again[tid] = true
		return true
	}
	s.work[tid] = true
	s.wg.Add(1)
	go s.worker(tid)
	return true
}

// worker runs the thread's runs one at a time, in order, until none is
// left to claim.
func (s *Server) worker(tid string) { s.workFrom(tid, nil) }

// workFrom is worker that executes first (when not nil) before it
// claims: a run created claimed, whose creation reserved the thread's
// worker (reserveWorker).
func (s *Server) workFrom(tid string, first *claimedRun) {
	defer s.wg.Done()
	growStack()
	for {
		var run *Run
		var t *Thread
		var ctx context.Context
		var cancel context.CancelCauseFunc
		var input any
		var err error
		if first != nil {
			run, t, ctx, cancel, input = first.run, first.thread, first.ctx, first.cancel, first.input
			first = nil
		} else {
			run, t, ctx, cancel, err = s.claim(tid)
		}
		if err != nil {
			s.log.Error("claiming a run", zapString("thread", tid), zapError(err))
		}
		if run == nil || err != nil {
			if s.workerEnds(tid) {
				return
			}
			continue
		}
		var next claimedRun
		_, idle := s.execute(ctx, cancel, run, t, input, &next)
		if next.run != nil {
			// Claimed with the end of the run before it.
			first = &next
			continue
		}
		if idle {
			// Nothing left to claim: a run created since kicked the
			// thread again (s.again), and is claimed then.
			if s.workerEnds(tid) {
				return
			}
		}
	}
}

// workerEnds ends the thread's worker, which found nothing to claim,
// unless the thread was kicked again meanwhile (it reports false then:
// the worker claims again). A worker that ends once the server is closed
// wakes the waits and streams of its thread's runs (hub.notifyThread):
// those on its pending runs, which no one here will start now, end (see
// abandoned) instead of waiting for a heartbeat to read the run again.
func (s *Server) workerEnds(tid string) bool {
	s.mu.Lock()
	if s.again[tid] && !s.closed {
		delete(s.again, tid)
		s.mu.Unlock()
		return false
	}
	delete(s.work, tid)
	delete(s.again, tid)
	closed := s.closed
	s.mu.Unlock()
	if closed {
		s.hub.notifyThread(tid)
	}
	return true
}

// claim claims the thread's next run (claimRun) and registers its
// cancel function, under the thread's local lock, so that whoever
// cancels a run under the thread's lock in this process finds it either
// pending or cancellable. It returns the run's thread too when the store
// is a RunRecorder (read with the claim), nil otherwise.
func (s *Server) claim(tid string) (*Run, *Thread, context.Context, context.CancelCauseFunc, error) {
	unlock, err := s.locks.local.Lock(s.base, tid)
	if err != nil {
		return nil, nil, nil, nil, nil // closing
	}
	defer unlock()
	run, t, err := s.claimRun(tid)
	if run == nil || err != nil {
		return nil, nil, nil, nil, err
	}
	ctx, cancel := context.WithCancelCause(s.base)
	s.mu.Lock()
	s.cancel[run.ID] = &runCancel{ctx: ctx, cancel: cancel}
	s.mu.Unlock()
	return run, t, ctx, cancel, nil
}

// claimRun claims the thread's next run under the store's lock of the
// thread (the caller holds the local one): in one call with a
// LockingRecorder whose lock is free, else taking the lock around the
// claim. Another instance that cancels the run under the lock after
// the claim finds it running with no cancel function registered there,
// and asks this instance through the run's record, which execute reads
// once the function is registered (takeover).
func (s *Server) claimRun(tid string) (run *Run, t *Thread, err error) {
	if lr, ok := s.store.(LockingRecorder); ok {
		run, t, err = lr.ClaimThreadLocked(s.base, tid, s.cfg.Worker, s.cfg.Lease)
		if !errors.Is(err, ErrThreadLocked) {
			return run, t, err
		}
	}
	if s.locks.store != nil {
		unlockStore, err := s.locks.store.LockThread(s.base, tid)
		if err != nil {
			return nil, nil, nil // closing
		}
		defer unlockStore()
	}
	if rr, ok := s.store.(RunRecorder); ok {
		return rr.ClaimThread(s.base, tid, s.cfg.Worker, s.cfg.Lease)
	}
	run, err = s.store.Claim(s.base, tid, s.cfg.Worker, s.cfg.Lease)
	return run, nil, err
}

// runLog appends the events of one execution of a run to the run's log
// and publishes each to this instance's streams once stored. With a
// LostLogAppender it passes the store the highest id the execution was
// given, so that a log lost meanwhile (a database crash) is numbered
// above every id the execution gave out.
type runLog struct {
	s       *Server
	runID   string
	attempt int
	last    atomic.Int64 // the highest id given; -1 before the first
}

// runLog returns the event log of an execution of run.
func (s *Server) runLog(run *Run) *runLog {
	l := &runLog{s: s, runID: run.ID, attempt: run.Attempt}
	l.last.Store(-1)
	return l
}

// emit appends an event named name with data (encoded as JSON).
func (l *runLog) emit(ctx context.Context, name string, data any) error {
	b, err := encodeEvent(name, data)
	if err != nil {
		return err
	}
	var ev Event
	if la, ok := l.s.store.(LostLogAppender); ok {
		ev, err = la.AppendEventAfter(ctx, l.runID, l.attempt, l.after(), name, b, l.s.cfg.MaxRunEvents)
	} else {
		ev, err = l.s.store.AppendEvent(ctx, l.runID, name, b, l.s.cfg.MaxRunEvents)
	}
	if err != nil {
		l.unknown(err)
		return err
	}
	l.given(ev.ID)
	l.s.hub.publish(l.runID, ev)
	return nil
}

// given records that the execution was given event id id.
func (l *runLog) given(id int64) {
	for {
		cur := l.last.Load()
		if id <= cur || l.last.CompareAndSwap(cur, id) {
			return
		}
	}
}

// unknown records as given the ids an append or an end whose outcome is
// unknown (err an UnknownAppendError) may have given: a log lost after
// it then numbers its events above them. A nil l records nothing.
func (l *runLog) unknown(err error) {
	var ue *UnknownAppendError
	if l != nil && errors.As(err, &ue) {
		l.given(ue.MaxID)
	}
}

// after is the highest id the execution was given, -1 for none or
// without an execution (a nil l).
func (l *runLog) after() int64 {
	if l == nil {
		return -1
	}
	return l.last.Load()
}

func (s *Server) emitter(ctx context.Context, runID string) func(name string, data any) error {
	return func(name string, data any) error {
		b, err := encodeEvent(name, data)
		if err != nil {
			return err
		}
		ev, err := s.store.AppendEvent(ctx, runID, name, b, s.cfg.MaxRunEvents)
		if err != nil {
			return err
		}
		s.hub.publish(runID, ev)
		return nil
	}
}

// encodeEvent returns the data of an event named name as compact JSON.
func encodeEvent(name string, data any) (json.RawMessage, error) {
	b, ok := data.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(data); err != nil {
			return nil, fmt.Errorf("encoding a %s event: %w", name, err)
		}
	} else if bytes.ContainsAny(b, "\r\n") {
		// JSON from a Codec may be indented; an SSE data line ends at
		// the first line break, so the event is sent compact.
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			return nil, fmt.Errorf("encoding a %s event: the codec gave invalid JSON: %w", name, err)
		}
		b = buf.Bytes()
	}
	return b, nil
}

// execute runs one claimed run to its end; ctx is the run's context,
// cancelled by cancel (registered in s.cancel by claim). It reports false
// when it gave the run back instead (its graph is not registered here), so
// that the caller does not claim it again at once. t is the run's
// thread when the caller has it (read with the claim); nil reads it.
// The thread's worker passes next: when the store is a NextClaimer, the
// run's end claims the thread's next run into it (see finishWith).
func (s *Server) execute(ctx context.Context, cancel context.CancelCauseFunc, run *Run, t *Thread, decoded any, next *claimedRun) (ran, idle bool) {
	store := s.store
	own := ctx // the context registered with cancel
	defer func() {
		cancel(nil)
		s.mu.Lock()
		// Only this execution's registration: after this instance's
		// own sweeper took the run over (adopt), the run's entries are
		// the new execution's.
		if rc := s.cancel[run.ID]; rc != nil && rc.ctx == own {
			delete(s.cancel, run.ID)
		}
		s.mu.Unlock()
	}()
	bg := s.bg
	var kw runCreate
	err := json.Unmarshal(run.Kwargs, &kw)
	if err == nil {
		err = kw.validate()
	}
	if err != nil {
		return true, s.finish(run, kw, RunError, "stored run is unreadable: "+err.Error())
	}
	g, gerr := s.executedGraph(kw)
	var terr error
	if t == nil {
		t, terr = store.Thread(bg, run.ThreadID)
	}
	if gerr != nil && terr == nil {
		s.unserved(run, kw, gerr) // for an instance that serves the graph
		return false, false
	}
	if terr != nil && !errors.Is(terr, ErrNotFound) {
		return true, s.finish(run, kw, RunError, s.internalMessage("run failed reading its thread", terr, zapString("run", run.ID)))
	}
	if gerr != nil || terr != nil {
		return true, s.finish(run, kw, RunError, errors.Join(gerr, terr).Error())
	}
	s.mu.Lock()
	delete(s.released, run.ID)
	s.mu.Unlock()
	kw.log = s.runLog(run)
	emit := func(name string, data any) error { return kw.log.emit(bg, name, data) }
	// The metadata event first, before the reads that prepare the run,
	// so that the client learns of the run's start as soon as it can; a
	// RunStarter appends it with the run's start instead (takeover).
	meta := metadataEvent{Attempt: max(run.Attempt, 1), RunID: run.ID, ThreadID: t.ID}
	_, folded := store.(RunStarter)
	if !folded {
		_ = emit("metadata", meta)
	}
	ctx, cancelT := context.WithTimeoutCause(ctx, s.cfg.RunTimeout, errRunTimeout)
	defer cancelT()
	if run.Owner != "" {
		// The graph's nodes learn whose run this is (guard.Principal),
		// from the run's record: the same on the instance that created
		// the run, on one that took it over, and for a stateless run.
		ctx = guard.WithPrincipal(ctx, run.Owner)
	}
	// Renew the claim while the run runs.
	defer s.renewLease(run.ID, run.Attempt, own, cancel)()

	// Where the run starts, for a rollback.
	start, rolled := t.Head, t.Rolled
	var latest any
	latestKnown := false
	if start == "" && !rolled {
		// A thread with no checkpoint gives "" and no error. Any other
		// error fails the run: recorded as a start of "", it would make
		// a takeover run on the run's drop without its input, and a
		// rollback of the run delete the thread's whole history.
		id, snap, err := g.latest(bg, t.ID)
		if err != nil {
			return true, s.finish(run, kw, RunError, s.internalMessage(fmt.Sprintf("reading the latest checkpoint of thread %s, where the run starts", t.ID), err, zapString("run", run.ID)))
		}
		latest, latestKnown, start = snap, true, id
	}
	kw.started = now()
	rc := &runCall{runID: run.ID, threadID: t.ID, input: kw.Input, checkpointID: kw.CheckpointID, subgraphs: kw.StreamSubgraphs,
		modes: make(map[string]bool, len(kw.modes)), metadata: make(map[string]any, len(t.Metadata)+len(kw.Metadata)+5),
		context: kw.runContext(run.Owner), durability: kw.Durability, latest: latest, latestKnown: latestKnown,
		decoded: decoded}
	if _, _, ok := s.byteCounting(); ok {
		kw.subgraphSaves = new(atomic.Bool)
		rc.subgraphSaves = kw.subgraphSaves
	}
	rc.checkpointID = kw.checkpointID()
	if rc.checkpointID == "" && t.Head != "" {
		rc.checkpointID, rc.head = t.Head, true
	}
	// The thread's head (the checkpoint a rollback returned it to) is
	// cleared once the run knows where it starts, before its graph runs:
	// a run that fails before (the drop of a pending step refused, say)
	// leaves the thread where it was. The run's recorded start stays the
	// checkpoint before a drop of a pending step, where a rollback
	// returns the thread, here or after a takeover; a takeover tells the
	// drop from the graph's steps by the checkpoint chain (droppedFrom).
	headSet := t.Head != "" || t.Rolled
	rc.begin = func() error {
		if headSet {
			if _, err := store.UpdateThread(bg, t.ID, func(t *Thread) error { t.Head, t.Rolled = "", false; return nil }); err != nil {
				return storeError{err}
			}
			headSet = false
		}
		return nil
	}
	for _, m := range kw.modes {
		rc.modes[m] = true
	}
	if kw.Command != nil && len(kw.Command.Resume) > 0 {
		rc.resume, rc.strictResume = kw.Command.Resume, kw.StrictResume
	}
	if kw.Command != nil {
		rc.update, rc.goTo = kw.Command.Update, kw.Command.Goto
	}
	rc.before, _ = stringOrList("interrupt_before", kw.InterruptBefore)
	rc.after, _ = stringOrList("interrupt_after", kw.InterruptAfter)
	if kw.Config != nil {
		rc.tags = kw.Config.Tags
		if n := kw.Config.RecursionLimit; n != nil && *n >= 1 && *n <= MaxRecursionLimit {
			rc.stepLimit = *n // refused out of range when the run was created
		}
		if n := kw.Config.MaxConcurrency; n != nil && *n >= 1 && *n <= MaxConcurrencyLimit {
			rc.concurrency = *n
		}
	}
	for k, v := range t.Metadata {
		rc.metadata[k] = v
	}
	for k, v := range kw.Metadata {
		rc.metadata[k] = v
	}
	if kw.Config != nil && kw.Config.RunName != "" {
		rc.metadata["run_name"] = kw.Config.RunName
	}
	rc.metadata["run_id"], rc.metadata["thread_id"] = run.ID, t.ID
	rc.metadata["graph_id"], rc.metadata["assistant_id"] = g.graphID(), run.AssistantID
	var cut bool
	if rc.labels, cut = checkpointLabels(rc.metadata); cut {
		s.log.Warn("the run's metadata is beyond MaxCheckpointMetadataBytes; its checkpoints hold only run_id, thread_id, graph_id, assistant_id and run_name of it",
			zapString("run", run.ID), zapInt("bytes", MaxCheckpointMetadataBytes))
	}

	rc.hasHead = headSet
	resume, st, asked, err := s.takeover(bg, run, g, start, kw.checkpointID(), meta, kw.log)
	if err != nil {
		return true, s.finish(run, kw, RunError, s.internalMessage("run failed taking over its thread", err, zapString("run", run.ID)))
	}
	if run.Started {
		start = run.Start
	}
	rc.start = start
	rc.again = run.Started
	// The run as it starts from its input, for a run that starts again
	// after a lost save (lostSave).
	initial := *rc
	initial.again = true
	if resume && headSet {
		// The thread's head is cleared before the graph runs: the run
		// taken over had not run it (the checkpoint after its start is
		// at most the drop of a pending step, which the run makes again).
		resume = false
	}
	if asked != "" {
		cancel(errCancelled{action: asked})
	}
	// resumeAt makes the run go on from st, the thread's latest
	// checkpoint, past the run's start (progress); it reports true, with
	// execute's idle, when it ended the run: its graph had finished.
	resumeAt := func(st *threadState) (ended, idle bool) {
		rc.input, rc.resume, rc.checkpointID, rc.head = nil, nil, "", false
		rc.update, rc.goTo = nil, nil // saved before the steps it goes on from
		// The instance that ran it before may have saved since the
		// thread was read above: the run reads it again.
		rc.latest, rc.latestKnown = nil, false
		if len(st.Next) == 0 && asked == "" {
			if err := rc.begin(); err != nil {
				return true, s.finish(run, kw, RunError, s.internalMessage("run failed clearing its thread's head", err, zapString("run", run.ID)))
			}
			return true, s.finishWith(run, g, RunSuccess, "", st, kw, "end", endEvent{RunID: run.ID, Status: RunSuccess}, next)
		}
		return false, false
	}
	if resume {
		// Taken over after its graph saved steps: go on from the latest
		// checkpoint, or end if the graph had finished.
		if ended, idle := resumeAt(st); ended {
			return true, idle
		}
	}
	res, err := g.execute(ctx, rc, emit)
	_, attempts := s.store.(AttemptRenewer)
	for lost := 0; attempts && context.Cause(ctx) == nil && s.lostSave(bg, err, t.ID, start); lost++ {
		// The run's last save is gone and the thread is back at the run's
		// start or at a checkpoint the run saved since, and no one else
		// writes it while the run is active: its checkpoint database lost
		// saves (one that does not wait for the WAL's flush, restarted
		// since). The run goes on from the thread's latest checkpoint, in
		// the same attempt, as long as this instance still holds its
		// lease on that attempt. Only with an AttemptRenewer: Renew alone
		// does not tell this execution from an older one of the same
		// worker that the sweeper took over.
		if lost == maxLostSaves {
			err = fmt.Errorf("%w (the run's saves were lost %d times in this attempt; it is not resumed again: check its checkpoint database)", err, lost)
			break
		}
		if rerr := s.renewOnce(ctx, run.ID, run.Attempt); rerr != nil {
			s.log.Warn("a checkpoint the run saved was lost and its lease could not be renewed; the run fails", zapString("run", run.ID), zapError(rerr))
			break
		}
		s.log.Warn("a checkpoint the run saved was lost; the run resumes from the thread's latest checkpoint", zapString("run", run.ID), zapError(err))
		// The resumed execution's events begin with a metadata event, as
		// an attempt's do: a client sees where the steps whose saves
		// were lost start to be sent again. It is the same attempt: its
		// events go on in the attempt's log, numbered on from there.
		if merr := emit("metadata", meta); merr != nil {
			err = storeError{merr}
			break
		}
		var st *threadState
		if resume, st, err = progress(bg, g, t.ID, start, kw.checkpointID()); err != nil {
			err = storeError{fmt.Errorf("reading the state of a run whose save was lost: %w", err)}
			break
		}
		*rc = initial
		rc.latest, rc.latestKnown = nil, false
		if resume {
			if ended, idle := resumeAt(st); ended {
				return true, idle
			}
		}
		res, err = g.execute(ctx, rc, emit)
	}
	cause := context.Cause(ctx)
	var cancelled errCancelled
	switch {
	case errors.Is(cause, errLeaseLost):
		// Another instance owns the run now: leave it the run's end. Or
		// the run's record is gone with its thread, deleted without
		// waiting for the run: see dropOrphan.
		s.log.Warn("run lost its lease and was stopped here", zapString("run", run.ID))
		s.dropOrphan(t.ID, run.Owner)
		s.hub.notify(run.ID)
		return true, false
	case errors.Is(cause, errRunDeleted):
		// Its thread was deleted: there is nothing left to record but
		// the checkpoints the run saved since (dropOrphan).
		s.dropOrphan(t.ID, run.Owner)
		s.hub.notify(run.ID)
		return true, false
	case errors.As(cause, &cancelled) && cancelled.action == "rollback":
		s.rollback(run, start)
		return true, false
	case errors.As(cause, &cancelled) || s.base.Err() != nil:
		idle = s.finishWith(run, g, RunInterrupted, "", nil, kw, "end", endEvent{RunID: run.ID, Status: RunInterrupted}, next)
	case errors.Is(cause, errRunTimeout):
		msg := fmt.Sprintf("run %s exceeded the server's run timeout of %s", run.ID, s.cfg.RunTimeout)
		idle = s.finishWith(run, g, RunTimeout, msg, nil, kw, "error", map[string]string{"error": "TimeoutError", "message": msg}, next)
	case errors.As(err, new(storeError)) || checkpointerFailed(err):
		msg := s.internalMessage("run failed on its store or checkpointer", err, zapString("run", run.ID))
		idle = s.finishWith(run, g, RunError, msg, nil, kw, "error", map[string]string{"error": "Error", "message": msg}, next)
	case err != nil:
		s.log.Info("run failed", zapString("run", run.ID), zapError(err))
		idle = s.finishWith(run, g, RunError, err.Error(), nil, kw, "error", map[string]string{"error": errorName(err), "message": err.Error()}, next)
	default:
		idle = s.finishWith(run, g, RunSuccess, "", res.state, kw, "end", endEvent{RunID: run.ID, Status: RunSuccess}, next)
	}
	return true, idle
}

// dropOrphan deletes the checkpoints of thread tid (its durable
// subgraphs' included) when the thread's record is gone, once a run of it
// executing here found its own record gone (it stopped for that, or its
// end found no record to record itself on). A thread's deletion waits
// for its runs on other instances, but only so long: about a lease for
// an instance that seems dead, less at Close (see removeThreadWithin). A
// run still running then saves checkpoints after the deletion, until it
// finds its record gone; they would stay, with no thread to delete them
// with. A thread created again with the same id meanwhile keeps its
// checkpoints. The graphs' WithThreadDeleted functions are called again
// for owner, the run's (the run may have saved data of their own since
// the deletion called them). A failure is logged.
func (s *Server) dropOrphan(tid, owner string) {
	bg := s.bg
	unlock, err := s.locks.Lock(bg, tid)
	if err != nil {
		s.log.Error("deleting the checkpoints a run saved after its thread was deleted", zapString("thread_id", tid), zapError(err))
		return
	}
	defer unlock()
	if _, err := s.store.Thread(bg, tid); !errors.Is(err, ErrNotFound) {
		if err != nil {
			s.log.Error("deleting the checkpoints a run saved after its thread was deleted", zapString("thread_id", tid), zapError(err))
		}
		return
	}
	plan, over, err := s.checkpointThreads(bg, tid)
	if over {
		s.log.Warn("deleting the checkpoints a run saved after its thread was deleted: its durable subgraphs' checkpoints past Config.MaxCopyCheckpoints are not looked for", zapString("thread_id", tid))
	}
	for _, sub := range plan {
		if err == nil {
			err = s.saver.DeleteThread(bg, tid+sub)
		}
	}
	if err != nil {
		s.log.Error("deleting the checkpoints a run saved after its thread was deleted", zapString("thread_id", tid), zapError(err))
	}
	if len(s.deletedHooks()) > 0 {
		s.threadDeleted(bg, tid, owner)
	}
}

// storeError marks an error of a run's store or checkpointer (not of its
// graph): its text is logged under an error_id, not sent to clients.
type storeError struct{ error }

// checkpointerFailed reports whether err, a run's, is its checkpointer's
// failure (a save or a read of the graph's, a *graph.CheckpointError):
// treated as a storeError. Two are the checkpointer's answers, not its
// failures, and said as is: a checkpoint that is not there (a run from
// an unknown checkpoint_id), and a thread moved on by another writer (a
// conflict, which names the thread and the checkpoints only).
func checkpointerFailed(err error) bool {
	return errors.As(err, new(*graph.CheckpointError)) && !errors.Is(err, checkpoint.ErrNotFound) && !errors.Is(err, checkpoint.ErrConflict)
}

// Unwrap returns the store's error.
func (e storeError) Unwrap() error { return e.error }

// maxLostSaves bounds how many times execute resumes a run whose save
// its checkpoint database lost (Server.lostSave), in one attempt of the
// run.
const maxLostSaves = 3

// maxLostSaveWalk bounds the checkpoints Server.lostSave lists, newest
// first, looking for the run's start: a thread moved further than that
// since the run started is not taken for a lost save.
const maxLostSaveWalk = 4 * MaxRecursionLimit

// lostSave reports whether err, a run's error, is a save of the run that
// its checkpoint database lost: a conflict on thread threadID, the run's
// own, whose expected checkpoint (the run's last save) is no longer in
// the saver, and whose actual latest checkpoint is start, the checkpoint
// the run started from, or one whose parent chain reaches start without
// passing the expected one. A thread with no checkpoint left qualifies
// only for a run that started on a new thread (start ""). Any other
// conflict is not a lost save: a writer of the thread other than the run
// (node code updating the run's own thread, a nested graph given its
// thread_id) left it past the run's last save, or the database lost
// checkpoints from before the run's start.
func (s *Server) lostSave(ctx context.Context, err error, threadID, start string) bool {
	var ce *checkpoint.ConflictError
	if !errors.As(err, &ce) || ce.ThreadID != threadID || ce.Expected == "" {
		return false
	}
	if ce.Actual == "" {
		return start == ""
	}
	cur := ce.Actual // the checkpoint of the chain looked for next
	before := ""
	for walked := 0; walked < maxLostSaveWalk; {
		if cur == start {
			return true
		}
		cps, err := s.saver.List(ctx, threadID, checkpoint.ListOptions{Before: before, Limit: 100})
		if err != nil || len(cps) == 0 {
			return false
		}
		for _, cp := range cps {
			walked++
			switch {
			case cp.ID == ce.Expected:
				// The run's last save is there: not lost.
				return false
			case cp.ID == cur:
				if cur = cp.ParentID; cur == start {
					return true
				}
				if cur == "" {
					return false
				}
			}
		}
		before = cps[len(cps)-1].ID
	}
	return false
}

// renewOnce renews the run's lease for its attempt (Server.renew) before
// it resumes after a lost save: it retries an error other than ErrNotFound
// and ErrLeaseLost (the lease is held by another attempt, or the run
// ended) up to twice, a sixth of Config.Lease apart, while ctx lasts.
func (s *Server) renewOnce(ctx context.Context, runID string, attempt int) error {
	var err error
	for try := 0; try < 3; try++ {
		if try > 0 {
			t := time.NewTimer(s.cfg.Lease / 6)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("%w (renewing the lease: %w)", context.Cause(ctx), err)
			case <-t.C:
			}
		}
		if err = s.renew(runID, attempt); err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrLeaseLost) {
			return err
		}
	}
	return err
}

// metadataEvent is the data of a run's first event. Its fields are in
// the order of their keys, as the reference server sends them.
type metadataEvent struct {
	Attempt  int    `json:"attempt"`
	RunID    string `json:"run_id"`
	ThreadID string `json:"thread_id"`
}

// endEvent is the data of the end event of a run that ended without an
// error.
type endEvent struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
}

// renewLease renews the claim on run runID every third of Config.Lease
// until the function it returns is called, and checks its record for a
// cancellation then (in case a notification was lost); it cancels the
// run with errLeaseLost when the claim is gone (taken over by another
// instance or by this one's sweeper, or ended there), marking lost the
// execution's registration in Server.cancel, the one whose context is
// own. A timer runs each renewal, in a goroutine of its own only while
// it renews; the next is set once it is done.
func (s *Server) renewLease(runID string, attempt int, own context.Context, cancel context.CancelCauseFunc) (stop func()) {
	every := s.cfg.Lease / 3
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	mu.Lock()
	defer mu.Unlock()
	t = time.AfterFunc(every, func() {
		start := time.Now()
		if err := s.renew(runID, attempt); errors.Is(err, ErrNotFound) {
			// Another execution holds the run now (or ended it): the
			// streams here poll the store for its events again, even
			// while a node that ignores its context keeps the graph
			// from returning. Only this execution's registration: when
			// this instance's own sweeper took the run over (adopt), the
			// run's registration is the new execution's, which publishes
			// its events to the hub here.
			s.mu.Lock()
			if rc := s.cancel[runID]; rc != nil && rc.ctx == own {
				rc.lost = true
			}
			s.mu.Unlock()
			cancel(errLeaseLost)
			return
		} else if err != nil {
			s.log.Warn("renewing a run's lease", zapString("run", runID), zapError(err))
		}
		s.checkCancel(runID)
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			// Every third of the lease from this renewal's start, not
			// from its end: slow store calls do not stretch the period.
			t.Reset(max(0, every-time.Since(start)))
		}
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		t.Stop()
	}
}

// renew extends this instance's lease on attempt of run runID, with
// RenewAttempt when the store is an [AttemptRenewer] (refused once the
// run is claimed again, even by this instance's own sweeper), with Renew
// otherwise.
func (s *Server) renew(runID string, attempt int) error {
	if ar, ok := s.store.(AttemptRenewer); ok {
		return ar.RenewAttempt(s.bg, runID, s.cfg.Worker, attempt, s.cfg.Lease)
	}
	return s.store.Renew(s.bg, runID, s.cfg.Worker, s.cfg.Lease)
}

// errorName names an error for an error event, as the reference server
// names the exception class. The checkpointer's answers said as is (a
// checkpoint conflict, a checkpoint not found), which come wrapped in a
// *graph.CheckpointError, are named Error, as the checkpointer's errors
// were before the graph marked them: the Go type is no kind of error a
// client knows.
func errorName(err error) string {
	var ne *graph.NodeError
	switch {
	case errors.As(err, &ne):
		return "NodeError"
	case errors.Is(err, graph.ErrThreadPaused), errors.Is(err, graph.ErrNothingToResume):
		return "InvalidUpdateError"
	case errors.Is(err, graph.ErrStepLimit):
		return "GraphRecursionError"
	case errors.Is(err, errUnknownInterrupt):
		return "UnknownInterruptError"
	case errors.As(err, new(*graph.CheckpointError)):
		return "Error"
	}
	var re *requestError
	if errors.As(err, &re) {
		return "ValidationError"
	}
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() != "" && token.IsExported(t.Name()) {
		return t.Name()
	}
	return "Error" // an unexported type names an implementation detail, not a kind of error
}

func (s *Server) finish(run *Run, kw runCreate, status, msg string) (idle bool) {
	return s.finishWith(run, nil, status, msg, nil, kw, "error", map[string]string{"error": "Error", "message": msg}, nil)
}

// finishWith records the run's end, under the thread's lock so that a run
// created meanwhile sees all of it or none: first the thread's new status,
// then the run's last event (evName, evData) with the run's status, at
// one commit with an EventEnder (else the event, then the status), so a
// client that read the last event finds the thread up to date and the
// run ended, and a stream that sees the run ended has its last event.
// The last event is published to this instance's streams once recorded.
// With a LockingRecorder whose lock of the thread is free, the three are one
// call, at one commit; otherwise three calls under the lock. It reports
// whether the thread was left with no pending or running run (as seen
// under the lock): the thread's worker then has nothing more to claim.
// With next (passed by the thread's worker only) and a NextClaimer, the
// one call also claims the thread's next run, registered as claim
// registers it, into next.
func (s *Server) finishWith(run *Run, g runner, status, msg string, st *threadState, kw runCreate, evName string, evData any, next *claimedRun) (idle bool) {
	bg := s.bg
	failed := ""
	if status == RunError || status == RunTimeout {
		failed = msg
	}
	var ended *Run             // the run's record as it ended
	var values json.RawMessage // the thread's values as the end left them, when known
	// The end's time, as the stores keep it (microseconds): a record
	// read back is the end recorded here only if it bears this time.
	at := now().Truncate(time.Microsecond)
	if kw.Temporary && kw.OnCompletion == "delete" && !kw.attached() {
		next = nil // the thread is deleted below: nothing to go on to
	}
	unlock, err := s.locks.local.Lock(bg, run.ThreadID)
	if err == nil {
		var folded bool
		// The run's checkpoints of durable subgraph threads, if it saved
		// any, are counted again with the thread's (Config.MaxThreadBytes).
		subgraphs := kw.subgraphSaves != nil && kw.subgraphSaves.Load()
		folded, ended, values, idle, err = s.finishFolded(bg, run, g, status, msg, failed, subgraphs, st, evName, evData, next, at, kw.log)
		if !folded {
			ended, idle, err = s.finishLocked(bg, run, g, status, msg, failed, subgraphs, st, evName, evData, at, kw.log)
		}
		unlock()
	}
	if errors.Is(err, ErrLeaseLost) && run.Worker != "" {
		// The folded end whose reply was lost may have committed after
		// its read-back found nothing, before the step-by-step end
		// found the run ended: the end is then this instance's, with
		// its webhook and its thread's deletion.
		if r, rerr := s.store.Run(bg, run.ID); rerr == nil && endedAs(run, r, status, msg, at) {
			ended, err = r, nil
		}
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrLeaseLost) {
		// The run's record may be gone with its thread, deleted without
		// waiting for the run, which saved its end since.
		s.dropOrphan(run.ThreadID, run.Owner)
	}
	if errors.Is(err, ErrLeaseLost) {
		// The new owner sends the run's webhook and deletes its thread.
		s.log.Warn("a run's end not recorded: another worker took the run over", zapString("run", run.ID), zapError(err))
		s.hub.notify(run.ID)
		return false
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		s.log.Error("saving a run's end", zapString("run", run.ID), zapError(err))
	}
	s.hub.notify(run.ID)
	if kw.Webhook != "" {
		s.sendWebhook(run.ID, ended, values, kw)
	}
	// An attached run whose server closed may have been detached since
	// it started (its request stopped waiting for it: see detach).
	if kw.Temporary && kw.OnCompletion == "delete" && (!kw.attached() || s.shut.Load() && s.detached(run.ID)) {
		if err := s.removeThread(bg, run.ThreadID); err != nil {
			s.log.Error("deleting a stateless run's thread", zapString("thread", run.ThreadID), zapError(err))
		}
	}
	return idle
}

// finishFolded records the run's end as finishWith does, in one call of
// a LockingRecorder whose lock of the thread is free; the caller holds
// the thread's local lock. It reports false when it recorded nothing:
// the store is no LockingRecorder, the thread's state could not be read,
// the lock is held elsewhere, or the store's transaction failed and the
// run's record shows it did not commit. With next and a NextClaimer, it
// claims the thread's next run into next (see finishWith). ended is the
// run's record as ended, nil when the run's record is missing; it is
// made here from run with the end's fields (the store's transaction
// returns no record), or read back after a failed transaction that
// committed after all. values are the thread's values as the end left
// them, from the thread's state the end recorded (nil when it recorded
// none, or read nothing back): ended and values are what the run's
// webhook sends, with no read that a deletion of the run or its thread
// after the commit (a stateless run's, or DELETE /threads/{id}) would
// fail.
func (s *Server) finishFolded(ctx context.Context, run *Run, g runner, status, msg, failed string, subgraphs bool, st *threadState, evName string, evData any, next *claimedRun, at time.Time, rl *runLog) (folded bool, ended *Run, values json.RawMessage, idle bool, err error) {
	lr, ok := s.store.(LockingRecorder)
	if !ok {
		return false, nil, nil, false, nil
	}
	f, err := s.threadRefresh(ctx, run.ThreadID, g, failed, status == RunInterrupted, subgraphs, st, run.ID)
	if err != nil {
		return false, nil, nil, false, nil // finishLocked reads it again, and logs the failure
	}
	data, err := encodeEvent(evName, evData)
	if err != nil {
		return false, nil, nil, false, nil
	}
	e := RunEnd{RunID: run.ID, ThreadID: run.ThreadID, Refresh: f,
		EventName: evName, EventData: data, MaxEvents: s.cfg.MaxRunEvents, Status: status, Error: msg, At: at,
		Worker: run.Worker, Attempt: run.Attempt, Next: rl.after() + 1}
	var active int
	var ev Event
	nc, claims := lr.(NextClaimer)
	if claims && next != nil {
		// Only when a run was created here for the thread while this
		// one ran (kick set s.again): the claim is a statement more in
		// the end's round trip, wasted on a lone run. Otherwise the
		// thread's next run is claimed apart, as without a NextClaimer.
		s.mu.Lock()
		claims = s.again[run.ThreadID]
		s.mu.Unlock()
	} else {
		claims = false
	}
	if claims {
		var nr *Run
		var nt *Thread
		active, ev, nr, nt, err = nc.FinishClaimNextLocked(ctx, e, s.cfg.Worker, s.cfg.Lease)
		if nr != nil {
			s.claimedNext(nr, nt, next)
			if active <= 1 {
				// The run claimed was the thread's last: its end
				// claims with it only if a run is created meanwhile
				// (kick sets s.again again); a run created
				// elsewhere is counted active by that end, and
				// claimed by the worker's loop.
				s.mu.Lock()
				delete(s.again, run.ThreadID)
				s.mu.Unlock()
			}
		}
	} else {
		active, ev, err = lr.FinishRunLocked(ctx, e)
	}
	switch {
	case errors.Is(err, ErrThreadLocked):
		return false, nil, nil, false, nil
	case errors.Is(err, ErrLeaseLost):
		// Another worker owns the run now: its end is that worker's to
		// record, not to be overwritten step by step here.
		return true, nil, nil, false, err
	case err != nil && !errors.Is(err, ErrNotFound):
		// The one transaction failed (a dropped connection, a deadlock):
		// unless it committed after all, record the end the plain way
		// rather than leave the run running until its lease expires and
		// another instance runs it again.
		// A next run the transaction claimed is not executed here: it
		// waits for its lease to expire, and is then claimed again (not
		// adopted from the thread's active runs, which could take a run
		// the sweeper claimed meanwhile and is about to execute).
		// An ended record is this end only if it is what the end
		// wrote; a run claimed by a worker that another ended is that
		// owner's (its webhook is the owner's to send).
		if r, rerr := s.store.Run(ctx, run.ID); rerr == nil && r.Status != RunRunning && r.Status != RunPending {
			if run.Worker == "" || endedAs(run, r, status, msg, at) {
				return true, r, nil, false, nil
			}
			return true, nil, nil, false, fmt.Errorf("run %s: ended %s at %s by another worker, not by %q attempt %d: %w",
				run.ID, r.Status, r.UpdatedAt.Format(time.RFC3339Nano), run.Worker, run.Attempt, ErrLeaseLost)
		}
		s.log.Warn("recording a run's end in one transaction failed; recording it step by step", zapString("run", run.ID), zapError(err))
		return false, nil, nil, false, nil
	}
	if err != nil { // ErrNotFound: the run's record is gone
		return true, nil, nil, false, err
	}
	// The record as the transaction left it, made before the end is
	// published: a stream's client that reads the end may delete the
	// run's thread at once.
	ended = new(Run)
	*ended = *run
	ended.endAt(status, msg, at)
	// Its request as stored: detach, once the server closes, may have
	// removed attached from it while the run ran (see finishWith).
	if s.shut.Load() {
		if kw, ok := withoutAttached(ended.Kwargs); ok && s.detached(run.ID) {
			ended.Kwargs = kw
		}
	}
	if f.State {
		values = f.Values
	}
	if ev.Name != "" {
		s.hub.publish(run.ID, ev)
	}
	return true, ended, values, active == 0, nil
}

// A runCancel is the registration in Server.cancel of one execution of a
// running run: its context and the function that cancels it. The context
// tells one execution's registration from another's (a takeover of the
// run by this instance's own sweeper registers a new one).
type runCancel struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	// lost is set (under Server.mu) when this execution's renewal found
	// its lease gone: another execution holds the run now, and streams
	// here poll the store for its events until this registration goes,
	// even while this execution's graph has not returned. It is the
	// execution's, not the run's: a new registration of the run (this
	// instance's own takeover) starts with it unset.
	lost bool
}

// claimedNext registers run r, claimed for this instance with the end of
// the run before it (t its thread), as claim registers a run it claims,
// into next; while the server closes it gives the run back instead, as
// createRun does with a run created claimed. The caller holds the
// thread's local lock.
func (s *Server) claimedNext(r *Run, t *Thread, next *claimedRun) {
	ctx, cancel := context.WithCancelCause(s.base)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel(nil)
		s.release(r, errors.New("server closing"), 0)
		return
	}
	s.cancel[r.ID] = &runCancel{ctx: ctx, cancel: cancel}
	s.mu.Unlock()
	*next = claimedRun{run: r, thread: t, ctx: ctx, cancel: cancel}
}

// finishLocked records the run's end as finishWith does, under the
// thread's lock: the caller holds the local one, finishLocked takes the
// store's. A run claimed by a worker (run.Worker set) that the store
// shows no longer running under that worker and attempt (its lease
// expired and another worker took it over) is the new owner's to end:
// finishLocked then writes nothing (not the thread's refresh, nor the
// last event, nor the end) and returns ErrLeaseLost. The end bears the
// time at, finishWith's, by which finishWith tells its own end, recorded
// by a call whose reply was lost, from another owner's.
func (s *Server) finishLocked(ctx context.Context, run *Run, g runner, status, msg, failed string, subgraphs bool, st *threadState, evName string, evData any, at time.Time, rl *runLog) (ended *Run, idle bool, err error) {
	if s.locks.store != nil {
		unlock, err := s.locks.store.LockThread(ctx, run.ThreadID)
		if err != nil {
			return nil, false, err
		}
		defer unlock()
	}
	if run.Worker != "" {
		// With an AttemptRenewer the check is a renewal of the lease
		// for this worker and attempt, not a read: a read that passes on
		// an expired lease leaves the run to another instance's sweeper
		// (ClaimDue does not take the thread's lock) while the end below
		// writes into the new owner's run.
		ar, renews := s.store.(AttemptRenewer)
		if renews {
			if err := ar.RenewAttempt(ctx, run.ID, run.Worker, run.Attempt, s.cfg.Lease); errors.Is(err, ErrNotFound) {
				if r, err := s.store.Run(ctx, run.ID); err == nil {
					return nil, false, fmt.Errorf("run %s: %s under worker %q attempt %d, no longer running under %q attempt %d; its end is the new owner's to record: %w",
						run.ID, r.Status, r.Worker, r.Attempt, run.Worker, run.Attempt, ErrLeaseLost)
				}
			} else if err != nil {
				renews = false // the read below decides
			}
		}
		if !renews {
			if r, err := s.store.Run(ctx, run.ID); err == nil && leaseLost(run, r) {
				return nil, false, fmt.Errorf("run %s: %s under worker %q attempt %d, no longer running under %q attempt %d; its end is the new owner's to record: %w",
					run.ID, r.Status, r.Worker, r.Attempt, run.Worker, run.Attempt, ErrLeaseLost)
			}
		}
	}
	active, err := s.refreshThreadAs(ctx, run.ThreadID, g, failed, status == RunInterrupted, subgraphs, st, run.ID)
	if err != nil {
		s.log.Error("saving a thread's status", zapString("thread", run.ThreadID), zapError(err))
	}
	idle = err == nil && active == 0
	data, encErr := encodeEvent(evName, evData)
	if ee, ok := s.store.(EventEnder); ok && encErr == nil {
		// The end and the last event at one commit, published once
		// recorded: a client that sees the end event finds the run ended.
		// A failure records neither: it is tried once more (a transient
		// one, SQLite busy, would otherwise leave the run running, and
		// its streams open, until its lease expires and it is taken
		// over). An end whose outcome is unknown is tried again only for
		// a run claimed by a worker, which the store refuses to end twice
		// (ErrLeaseLost: finishWith then finds its own end by at).
		var ended *Run
		var ev Event
		var err error
		for try := 0; ; try++ {
			ended, ev, err = ee.EndRunEvent(ctx, RunEnd{RunID: run.ID, ThreadID: run.ThreadID, EventName: evName, EventData: data,
				MaxEvents: s.cfg.MaxRunEvents, Status: status, Error: msg, At: at, Worker: run.Worker, Attempt: run.Attempt, Next: rl.after() + 1})
			rl.unknown(err)
			var ue *UnknownAppendError
			if err == nil || try == 1 || errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrNotFound) || errors.As(err, &ue) && run.Worker == "" {
				break
			}
			s.log.Warn("recording a run's end with its last event failed; trying once more", zapString("run", run.ID), zapError(err))
			select {
			case <-ctx.Done():
				return nil, idle, err
			case <-time.After(endRetryPause):
			}
		}
		if err == nil {
			s.hub.publish(run.ID, ev)
		}
		return ended, idle, err
	}
	emit := s.emitter(ctx, run.ID)
	if rl != nil {
		emit = func(name string, data any) error { return rl.emit(ctx, name, data) }
	}
	if err := emit(evName, evData); err != nil && !errors.Is(err, ErrNotFound) {
		s.log.Error("saving a run's last event", zapString("run", run.ID), zapError(err))
	}
	ended, err = s.endRun(ctx, run, status, msg, at)
	return ended, idle, err
}

// endRetryPause is the pause before finishLocked tries a failed
// EndRunEvent again: long enough for a transient failure (a SQLite
// database busy past its busy timeout) to pass, short beside a lease.
const endRetryPause = 100 * time.Millisecond

// leaseLost reports whether cur, the store's record of run (a run
// claimed by a worker), shows it no longer running under run's worker
// and attempt: another worker took it over (and may have ended it).
func leaseLost(run, cur *Run) bool {
	return cur.Status != RunRunning || cur.Worker != run.Worker || cur.Attempt != run.Attempt
}

// endedAs reports whether cur, the store's record of run (a run claimed
// by a worker), is the end recorded by run's worker and attempt with
// status and msg at at, and not another owner's.
func endedAs(run, cur *Run, status, msg string, at time.Time) bool {
	return cur.Status == status && cur.Error == msg && cur.UpdatedAt.Equal(at) &&
		cur.Attempt == run.Attempt && (cur.Worker == "" || cur.Worker == run.Worker)
}

// endRun records the run's end with its status and error message, in
// one call when the store is a RunRecorder. For a run claimed by a
// worker (run.Worker set), the end is made only if the run is still the
// worker's (ErrLeaseLost otherwise): with an OwnedEnder, or in
// UpdateRun's change. at is the end's time (finishWith's, which tells
// its own end from another's by it).
func (s *Server) endRun(ctx context.Context, run *Run, status, msg string, at time.Time) (*Run, error) {
	if oe, ok := s.store.(OwnedEnder); ok && run.Worker != "" {
		return oe.EndRunOwned(ctx, run.ID, status, msg, at, run.Worker, run.Attempt)
	}
	if rr, ok := s.store.(RunRecorder); ok {
		return rr.EndRun(ctx, run.ID, status, msg, at)
	}
	return s.store.UpdateRun(ctx, run.ID, func(r *Run) error {
		if run.Worker != "" && leaseLost(run, r) {
			return fmt.Errorf("run %s: %s under worker %q attempt %d, no longer running under %q attempt %d; its end is the new owner's to record: %w",
				run.ID, r.Status, r.Worker, r.Attempt, run.Worker, run.Attempt, ErrLeaseLost)
		}
		r.endAt(status, msg, at)
		return nil
	})
}

// endAt records on r the run's end with status and error message msg at
// at, as the stores record it: the run no longer under a worker, nor
// leased.
func (r *Run) endAt(status, msg string, at time.Time) {
	r.Status, r.Error, r.UpdatedAt, r.Worker, r.LeaseUntil = status, msg, at, "", time.Time{}
}

func (b runCreate) attached() bool { return b.Attached }

// checkpointID is the checkpoint the request names for its run to start
// from: checkpoint.checkpoint_id, else checkpoint_id (which validate sets
// from config.configurable too); "" when it names none.
func (b *runCreate) checkpointID() string {
	if b.Checkpoint != nil && b.Checkpoint.CheckpointID != "" {
		return b.Checkpoint.CheckpointID
	}
	return b.CheckpointID
}

// rollback deletes a cancelled run and returns its thread to the
// checkpoint the run started from. It holds the thread's lock, as a run's
// end does (finishWith), so that a run created meanwhile sees all of the
// rollback or none of it; and, as a run's end records the thread's status
// before the run's, it brings the thread's record back (its head, values
// and status, not counting the run) before it deletes the run: a client
// that finds the run gone finds the thread as the rollback left it, not
// still busy with the run.
//
// A rollback is never lost: when the lock cannot be taken (a transient
// error of the store) it tries again, backing off, while the server
// lives; when the server closes first, it records the rollback on the run
// (Run.Cancel), which the instance that takes the run over performs, as
// it does a rollback asked of a run running elsewhere. A run whose
// thread's head cannot be set is left running, for the same takeover.
func (s *Server) rollback(run *Run, start string) {
	bg := s.bg
	defer s.hub.notify(run.ID)
	// A thread deleted while its run ran: the checkpoints the run saved
	// since are orphans, dropped (dropOrphan) once the thread's lock,
	// which dropOrphan takes, is released.
	orphan := false
	defer func() {
		if orphan {
			s.dropOrphan(run.ThreadID, run.Owner)
		}
	}()
	unlock, err := s.lockRollback(run)
	if err != nil {
		s.log.Error("rolling back a run", zapString("run", run.ID), zapError(err))
		return
	}
	defer unlock()
	// A store outage longer than the lease may have let another instance
	// take the run over meanwhile: the rollback is then its owner's, and
	// recorded on the run for it.
	cur, err := s.store.Run(bg, run.ID)
	if errors.Is(err, ErrNotFound) {
		orphan = true // deleted with its thread, or alone (then dropOrphan keeps all)
		return
	}
	if err != nil {
		s.log.Error("rolling back a run", zapString("run", run.ID), zapError(err))
		s.deferRollback(run)
		return
	}
	if cur.Worker != s.cfg.Worker || cur.Attempt != run.Attempt {
		if !finished(cur.Status) {
			s.deferRollback(run)
		}
		return
	}
	_, err = s.store.UpdateThread(bg, run.ThreadID, func(t *Thread) error {
		t.Head, t.Rolled = start, start == ""
		return nil
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		// The thread is as the run left it, and the run still running:
		// its record says so (the run counted), and the rollback is left
		// to the run's takeover.
		s.log.Error("rolling back a run", zapString("run", run.ID), zapError(err))
		s.deferRollback(run)
		_ = s.refreshThread(bg, run.ThreadID, nil, "", nil)
		return
	}
	orphan = err != nil // ErrNotFound: the thread was deleted
	if err == nil && start == "" {
		// The thread had no checkpoint before the run: all of its
		// checkpoints go, its durable subgraphs' threads with them
		// (found as a thread's deletion finds them), or they would
		// stay on disk with the thread's subgraph bytes counted zero.
		var plan []string
		var over bool
		plan, over, err = s.checkpointThreads(bg, run.ThreadID)
		if over {
			s.log.Warn("rolling back a run: its thread's durable subgraphs' checkpoints past Config.MaxCopyCheckpoints are not looked for", zapString("thread_id", run.ThreadID))
		}
		for i := len(plan) - 1; i >= 0 && err == nil; i-- {
			err = s.saver.DeleteThread(bg, run.ThreadID+plan[i]) // the subgraphs' first: a failure leaves them findable
		}
	}
	if t, terr := s.store.Thread(bg, run.ThreadID); terr == nil {
		st := (*threadState)(nil)
		if g := s.threadGraph(t); g != nil && start != "" {
			st, _ = g.state(bg, t.ID, start)
		}
		_, _ = s.store.UpdateThread(bg, t.ID, func(t *Thread) error {
			if st != nil {
				t.Values, t.Interrupts = st.Values, st.taskInterrupts()
			} else if start == "" {
				t.Values, t.Interrupts = nil, nil
			}
			return nil
		})
		_ = s.refreshThread(bg, t.ID, nil, "", nil, run.ID)
		// The checkpoints the run saved stay (off the thread's head),
		// and were not counted by an end of the run's (Config.MaxThreadBytes):
		// counted now, its durable subgraphs' too (rollbacks are rare).
		s.recordThreadBytes(bg, t.ID, true)
	}
	if err == nil {
		err = s.store.DeleteRun(bg, run.ID)
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		// The run is not deleted (its checkpoints or its record): it is
		// counted again, and the rollback left to its takeover.
		s.log.Error("rolling back a run", zapString("run", run.ID), zapError(err))
		s.deferRollback(run)
		_ = s.refreshThread(bg, run.ThreadID, nil, "", nil)
	}
}

// rollbackRetryMax bounds the wait between two attempts of a rollback to
// lock its thread.
const rollbackRetryMax = time.Second

// rollbackLogEvery is how many failed attempts of a rollback to lock its
// thread pass between two warnings: about one a minute once the waits
// reach rollbackRetryMax, so that a long outage is seen to go on.
const rollbackLogEvery = 60

// lockRollback locks the thread of a run being rolled back, trying again
// while the server lives. When the server closes before it holds the lock
// it records the rollback on the run (deferRollback) and returns the last
// error, which says whether the rollback could be recorded. It logs the
// first failure and then one in every s.rollbackLogEvery (the retries of
// one rollback are a warning a minute, not one a second); the caller logs
// the giving up.
func (s *Server) lockRollback(run *Run) (func(), error) {
	wait := 10 * time.Millisecond
	for tries := 0; ; tries++ {
		unlock, err := s.locks.Lock(s.bg, run.ThreadID)
		if err == nil {
			return unlock, nil
		}
		if s.base.Err() != nil {
			if derr := s.deferRollback(run); derr != nil {
				return nil, fmt.Errorf("locking its thread failed %d times before the server closed (%w), and recording the rollback on the run for its takeover failed too: %v; the run is left to its takeover, which resumes it instead", tries+1, err, derr)
			}
			return nil, fmt.Errorf("locking its thread failed %d times before the server closed; the rollback is recorded on the run for its takeover: %w", tries+1, err)
		}
		if tries%s.rollbackLogEvery == 0 {
			s.log.Warn("locking the thread of a run being rolled back; trying again until it succeeds or the server closes",
				zapString("run", run.ID), zapInt("tries", tries+1), zapError(err))
		}
		t := time.NewTimer(wait)
		select {
		case <-s.base.Done():
		case <-t.C:
		}
		t.Stop()
		wait = min(2*wait, rollbackRetryMax)
	}
}

// deferRollback records a rollback this instance could not perform on the
// run (Run.Cancel), so that the instance that takes the run over once its
// lease expires performs it. It logs and returns the error of recording
// it (nil when the run is gone).
func (s *Server) deferRollback(run *Run) error {
	_, err := s.store.UpdateRun(s.bg, run.ID, func(r *Run) error {
		r.Cancel = "rollback"
		return nil
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		s.log.Error("recording a rollback for the run's takeover", zapString("run", run.ID), zapError(err))
		return err
	}
	return nil
}

// restartBase is the multiple of which a Store that can lose a run's
// event log (the PostgreSQL store's, in a database crash) numbers the log
// a later attempt of the run creates: the attempt times 2^40, above every
// id an earlier attempt gave a client.
const restartBase = 1 << 40

// --- handlers ---

func (s *Server) createRunBackground(w http.ResponseWriter, r *http.Request) {
	run, body, err := s.newRun(r, r.PathValue("tid"), false)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Location", runPath(run, body.Temporary))
	writeJSON(w, 200, runJSON(run))
}

// ownRun loads the run named by the path, on a thread the request's
// principal owns.
func (s *Server) ownRun(r *http.Request) (*Run, error) {
	rid, err := canonUUID("run_id", r.PathValue("rid"))
	if err != nil {
		return nil, err
	}
	if r.PathValue("tid") == "" {
		// A route without the thread (GET /runs/{rid}/stream, the JS
		// SDK's joinStream of a stateless run): the run's thread, which
		// must be the caller's, as on the routes that name it.
		run, err := s.store.Run(r.Context(), rid)
		if errors.Is(err, ErrNotFound) {
			return nil, errorf(http.StatusNotFound, "run %s not found", rid)
		}
		if err != nil {
			return nil, err
		}
		if _, err := s.ownThread(r, run.ThreadID); err != nil {
			var re *requestError
			if errors.As(err, &re) && re.status == http.StatusNotFound {
				return nil, errorf(http.StatusNotFound, "run %s not found", rid)
			}
			return nil, err
		}
		return run, nil
	}
	t, err := s.ownThread(r, r.PathValue("tid"))
	if err != nil {
		return nil, err
	}
	tid := t.ID
	run, err := s.store.Run(r.Context(), rid)
	if errors.Is(err, ErrNotFound) || err == nil && run.ThreadID != tid {
		return nil, errorf(http.StatusNotFound, "run %s of thread %s not found", rid, tid)
	}
	return run, err
}

func (s *Server) createRunStream(w http.ResponseWriter, r *http.Request) {
	run, body, err := s.newRun(r, r.PathValue("tid"), true)
	if err != nil {
		writeError(w, err)
		return
	}
	left := false
	if body.Temporary && body.OnCompletion == "delete" {
		defer func() {
			// The stream's last event first: the thread's removal waits
			// for the run's record to end, with no write deadline (over
			// HTTP/2 one passing resets the stream); the server renews
			// it for the response's end once this handler returns.
			_ = http.NewResponseController(w).Flush()
			responseDeadline(w, s.cfg.StreamWriteTimeout).idle()
			// Cancelled only when its client left: a stream that stopped
			// on a store error leaves a client that is still connected,
			// and its run runs on.
			s.removeWhenEnded(run, left && body.OnDisconnect == "cancel")
		}()
	}
	w.Header().Set("Content-Location", runPath(run, body.Temporary))
	if !body.Temporary {
		w.Header().Set("Location", runPath(run, false)+"/stream")
	}
	left = s.stream(w, r, run, -1, nil, body.OnDisconnect == "cancel", &hubWatch{ch: body.watched, release: body.unwatch})
}

func (s *Server) createRunWait(w http.ResponseWriter, r *http.Request) {
	run, body, err := s.newRun(r, r.PathValue("tid"), true)
	if err != nil {
		writeError(w, err)
		return
	}
	body.unwatch()
	if body.Temporary && body.OnCompletion == "delete" {
		defer s.removeWhenEnded(run, body.OnDisconnect == "cancel")
	}
	w.Header().Set("Content-Location", runPath(run, body.Temporary))
	s.wait(w, r, run, body.OnDisconnect == "cancel")
}

// checkRunCheckpoint refuses a run on thread tid ("" for a stateless
// run) that starts from a checkpoint the thread does not have: one of
// another thread, or none at all, as when the thread does not exist yet
// (if_not_exists create would create it, and the run would fail when it
// started, leaving the new thread in status error). A stateless run has
// no checkpoint to start from: one that names a checkpoint is refused
// with 422. The check reads the checkpoint's existence only (a List
// before it), not its channels' values, as Get would.
func (s *Server) checkRunCheckpoint(r *http.Request, tid string, body *runCreate) error {
	cid := body.checkpointID()
	if cid == "" {
		return nil
	}
	const field = "checkpoint_id" // or checkpoint.checkpoint_id, or config's
	if tid == "" {
		return errorf(422, "%s: a stateless run starts on a new thread, which has no checkpoints; drop %s, or start the run on its thread (POST /threads/{thread_id}/runs)", field, field)
	}
	if err := checkCheckpointID(field, cid); err != nil {
		return err
	}
	t, err := s.ownThread(r, tid)
	if re := (*requestError)(nil); errors.As(err, &re) && re.status == http.StatusNotFound {
		id, _ := canonUUID("thread_id", tid)
		return errorf(http.StatusNotFound, "%s: checkpoint %q of thread %s not found, as the thread is not; create the thread and start a run on it first, or drop %s", field, clip(cid), id, field)
	}
	if err != nil {
		return err
	}
	_, err = s.saver.List(r.Context(), t.ID, checkpoint.ListOptions{Before: cid, Limit: 1})
	if errors.Is(err, checkpoint.ErrNotFound) {
		return errorf(http.StatusNotFound, "%s: checkpoint %q of thread %s not found; give one of its checkpoints (POST /threads/%s/history lists them)", field, clip(cid), t.ID, t.ID)
	}
	return err
}

// removeWhenEnded deletes the thread of a stateless run (on_completion
// delete) whose request (/runs/stream, /runs/wait) returns: at once when
// the run has ended, else in the background once it ends, so that a
// request that returns first (its client left, or stopped reading past
// Config.StreamWriteTimeout) gives back its slot of Config.MaxStreams
// now, not when the run ends. A run that has not ended has lost its only
// reader: no one can read its result, as its thread goes at its end and
// this server serves no stateless join (GET /runs/{run_id}/stream). With
// cancel (on_disconnect cancel, the default) it is cancelled, with action
// interrupt, as a client's disconnection cancels it; with on_disconnect
// continue it runs to its end (for its webhook, say).
func (s *Server) removeWhenEnded(run *Run, cancel bool) {
	// A failed read does not say the run ended: it is waited for (the
	// thread's deletion cancels a run still running).
	if cur, err := s.store.Run(s.bg, run.ID); errors.Is(err, ErrNotFound) || err == nil && finished(cur.Status) {
		if err := s.removeThread(s.bg, run.ThreadID); err != nil {
			s.log.Error("deleting a stateless run's thread", zapString("thread", run.ThreadID), zapError(err))
		}
		return
	}
	if cancel {
		s.cancelRunByID(run, "interrupt")
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.detach(run) // as removeAfter does once the server closes
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		s.removeAfter(run)
	}()
}

// detach makes the deletion of a stateless run's thread at the run's end
// durable, for a server that closes before the run ends and so stops
// waiting for it (removeWhenEnded, removeAfter): it clears attached in
// the run's stored request, so that the run's end deletes the thread on
// whichever instance ends it, as for a run created detached (see
// finishWith). A run that ended meanwhile has its thread deleted here.
func (s *Server) detach(run *Run) {
	bg := s.bg
	_, err := s.store.UpdateRun(bg, run.ID, func(r *Run) error {
		if b, ok := withoutAttached(r.Kwargs); ok {
			r.Kwargs = b
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return
	}
	if err != nil {
		s.log.Error("marking a stateless run's thread for deletion at the run's end", zapString("run", run.ID), zapError(err))
	}
	// After the mark: a run that ends after this read finds it (see
	// finishWith).
	if cur, err := s.store.Run(bg, run.ID); err == nil && finished(cur.Status) {
		if err := s.removeThread(bg, run.ThreadID); err != nil {
			s.log.Error("deleting a stateless run's thread", zapString("thread", run.ThreadID), zapError(err))
		}
	}
}

// withoutAttached returns a run's stored request kwargs without its
// attached field, and whether it had one (false too when kwargs is not a
// JSON object).
func withoutAttached(kwargs json.RawMessage) (json.RawMessage, bool) {
	var kw map[string]json.RawMessage
	if json.Unmarshal(kwargs, &kw) != nil {
		return kwargs, false
	}
	if _, ok := kw["attached"]; !ok {
		return kwargs, false
	}
	delete(kw, "attached")
	b, err := json.Marshal(kw)
	if err != nil {
		return kwargs, false
	}
	return b, true
}

// detached reports whether the stored request of run runID, created
// attached, was detached since (see detach).
func (s *Server) detached(runID string) bool {
	cur, err := s.store.Run(s.bg, runID)
	if err != nil {
		return false
	}
	var kw runCreate
	return json.Unmarshal(cur.Kwargs, &kw) == nil && !kw.Attached
}

// removeAfter deletes a stateless run's thread once the run has ended.
func (s *Server) removeAfter(run *Run) {
	bg := s.bg
	ch, release := s.hub.watch(run.ID, run.ThreadID)
	defer release()
	var retry *time.Timer
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	for {
		cur, err := s.store.Run(bg, run.ID)
		if errors.Is(err, ErrNotFound) || err == nil && finished(cur.Status) {
			break
		}
		var again <-chan time.Time
		if err != nil {
			// Not known to have ended: read again after a heartbeat,
			// as a change may come while the store fails.
			if retry == nil {
				retry = time.NewTimer(s.cfg.Heartbeat)
			} else {
				retry.Reset(s.cfg.Heartbeat)
			}
			again = retry.C
		}
		select {
		case <-ch:
			ch, release = s.rewatch(run.ID, run.ThreadID, release)
		case <-again:
		case <-s.base.Done():
			s.detach(run)
			return
		}
	}
	if err := s.removeThread(bg, run.ThreadID); err != nil {
		s.log.Error("deleting a stateless run's thread", zapString("thread", run.ThreadID), zapError(err))
	}
}

func (s *Server) rewatch(runID, threadID string, release func()) (<-chan struct{}, func()) {
	ch, rel := s.hub.watch(runID, threadID)
	release()
	return ch, rel
}

func finished(status string) bool { return status != RunPending && status != RunRunning }

// hubWatch is a watch of a run in the hub: its channel and its release.
type hubWatch struct {
	ch      <-chan struct{}
	release func()
}

// stream writes the run's events from after on as SSE until the run ends,
// filtered to modes when set. cancel cancels the run when the client goes
// away first. fresh, when not nil, is the hub watch newRun took on the
// run before it could start, which the stream takes over: every event
// this instance appended to its log since is in the hub, so the stream
// reads the store only for events other instances appended (they wake it
// without the event, closing fresh's channel, which the stream waits on
// first). It reports whether it stopped because the client left (a
// write failed, or the request's context ended), not because the run
// ended or the store failed.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, run *Run, after int64, modes []string, cancel bool, fresh *hubWatch) (left bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	// Each write gets Config.StreamWriteTimeout: a client that stops
	// reading ends its stream (the write fails) instead of holding this
	// handler and its stream slot until the run ends. The deadline is
	// renewed right before each write and cleared while the stream waits
	// or reads the store, as it may take longer than the timeout between
	// two writes (over HTTP/2 a deadline resets the stream when it
	// passes, even with no write in progress); the server renews it for
	// the response's end once the handler returns (see Server.ServeHTTP).
	wd := responseDeadline(w, s.cfg.StreamWriteTimeout)
	deadline := wd.renew
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	deadline()
	_ = rc.Flush()
	ctx := r.Context()
	hb := time.NewTicker(s.cfg.Heartbeat)
	defer hb.Stop()
	var ch <-chan struct{}
	var release func()
	if fresh != nil {
		ch, release = fresh.ch, fresh.release
	} else {
		ch, release = s.hub.watch(run.ID, run.ThreadID)
	}
	defer release()
	warned := false
	closing := s.base.Done()
	var buf []byte // an event's SSE, reused
	for initial := fresh != nil; ; initial = false {
		// The events this instance appended since, without a read of the
		// store; the store when the hub does not hold the next one. A
		// fresh run's stream waits without reading the store at first:
		// what the store holds then was appended here, so is in the hub.
		// The stream holds its watch to its end, so the run's entry stays;
		// the channel taken with the events (before a read of the store)
		// is closed by the next change after them, and only by it.
		evs, changed := s.hub.since(run.ID, after)
		fromHub := evs != nil
		if changed != nil && (fromHub || !initial) {
			// (A fresh stream that found nothing waits on fresh's channel,
			// which a notification since newRun has closed.)
			ch = changed
		}
		if fromHub || !initial {
			var first int64
			var err error
			if !fromHub {
				// No write deadline while the store is read: over HTTP/2
				// one passing resets the stream (see writeDeadline.idle).
				wd.idle()
				evs, first, err = s.store.Events(ctx, run.ID, after, 256)
			}
			if errors.Is(err, ErrNotFound) {
				// Deleted (rolled back, or with its thread): said, as
				// every end of a stream is.
				name, data := s.lastWord(ctx, run.ID, nil)
				deadline()
				writeSSE(w, name, data)
				return false
			}
			if err != nil {
				if ctx.Err() != nil {
					// The client left during the read (a store that honours
					// ctx fails the read).
					if cancel {
						s.cancelRunByID(run, "interrupt")
					}
					return true
				}
				deadline()
				writeSSE(w, "error", map[string]string{"error": "Error", "message": s.internalMessage("reading a run's events for its stream", err, zapString("run", run.ID))})
				return false
			}
			if !fromHub && len(evs) > 0 && evs[0].ID <= after {
				// The log restarted below the client's position (its events
				// were lost and the run's next attempt numbers them from 0
				// again): say so, and send it from its start.
				deadline()
				writeSSE(w, "error", map[string]string{"error": "EventsDropped", "message": fmt.Sprintf("the event log of run %s restarted below event %d (its events were lost, e.g. in a database crash); sending it again from event %d", run.ID, after, evs[0].ID)})
				after, warned = -1, false
			}
			if !fromHub && after+1 < first && !warned && (after >= 0 || first%restartBase != 0) {
				// Events before the log's first are lost to the client:
				// dropped past Config.MaxRunEvents, or lost with a log a
				// run's later attempt numbered from a multiple of
				// restartBase, or its attempt, going on across the loss,
				// from a multiple of 2^32 above the ids it had given
				// (LostLogAppender). A client that has seen none (after -1) of
				// a log that starts at such a base lost nothing: the log
				// holds every event of the attempt that created it.
				warned = true
				deadline()
				writeSSE(w, "error", map[string]string{"error": "EventsDropped", "message": fmt.Sprintf("events %d to %d of run %s are no longer kept (the log holds the last %d events, Config.MaxRunEvents; or a database crash lost the log, and the run numbered its events from %d on, above the ids given before)", after+1, first-1, run.ID, s.cfg.MaxRunEvents, first)})
			}
			for _, ev := range evs {
				after = ev.ID
				if keep(ev.Name, modes) {
					buf = appendSSE(buf[:0], ev.Name, ev.ID, ev.Data)
					deadline()
					if _, err := w.Write(buf); err != nil {
						return true // the client stopped reading, or left
					}
				}
				if ev.Name == "end" || ev.Name == "error" && !strings.Contains(string(ev.Data), `"EventsDropped"`) {
					// No flush: net/http sends the last event with the
					// response's end, in one write, once the handler
					// returns (a caller with more to do first flushes).
					return false
				}
			}
			if len(evs) > 0 {
				deadline()
				if err := rc.Flush(); err != nil {
					return true
				}
				if len(evs) == 256 && !fromHub {
					continue // more may be waiting
				}
				// Wait for the next change: ch was taken before the read, so
				// an event appended since has already closed it. (A read
				// here would cost a store round trip per event.)
			} else {
				wd.idle()
				cur, err := s.store.Run(ctx, run.ID)
				if err != nil && ctx.Err() != nil {
					if cancel {
						s.cancelRunByID(run, "interrupt")
					}
					return true
				}
				if err != nil || finished(cur.Status) {
					// Events written between the read and the status check.
					if evs, _, _ := s.store.Events(ctx, run.ID, after, 1); len(evs) > 0 {
						continue
					}
					switch {
					case err == nil || errors.Is(err, ErrNotFound):
						// Its log holds nothing past the client's position
						// (the client saw its end, or gave a position past
						// it, or the run ended before it started): its end
						// is said again, so that no stream ends silently.
						if err != nil {
							cur = nil
						}
						name, data := s.lastWord(ctx, run.ID, cur)
						deadline()
						writeSSE(w, name, data)
					default:
						// Said, as a failed read of the events is: the
						// client is told why its stream ends.
						deadline()
						writeSSE(w, "error", map[string]string{"error": "Error", "message": s.internalMessage("reading a run for its stream", err, zapString("run", run.ID))})
					}
					return false
				}
				if s.abandoned(cur) {
					// Closed, this server will not start the run: the
					// stream ends, saying why, instead of waiting until
					// the client leaves.
					deadline()
					err := s.abandonedError(cur)
					writeSSE(w, "error", map[string]string{"error": err.name, "message": err.Error()})
					return false
				}
			}
		}
		wd.idle()
	wait:
		for {
			select {
			case <-ch:
				// The next round's since takes the run's new channel.
				break wait
			case <-closing:
				closing = nil // read the run again, once
				break wait
			case <-hb.C:
				deadline()
				if _, err := io.WriteString(w, ": heartbeat\n\n"); err != nil {
					return true
				}
				if err := rc.Flush(); err != nil {
					return true
				}
				wd.idle()
				if !s.executing(run.ID) {
					// Poll the store: the run is pending, or runs on
					// another instance, whose notification may be lost.
					break wait
				}
				// This instance runs it: its events and its end wake the
				// stream, and no poll finds more.
			case <-ctx.Done():
				if cancel {
					s.cancelRunByID(run, "interrupt")
				}
				return true
			}
		}
	}
}

// executing reports whether this instance executes run runID now and
// still holds its lease.
func (s *Server) executing(runID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	rc := s.cancel[runID]
	return rc != nil && !rc.lost
}

// keep reports whether an event goes to a stream that asked for modes.
func keep(name string, modes []string) bool {
	if len(modes) == 0 {
		return true
	}
	base, _, _ := strings.Cut(name, "|")
	switch base {
	case "metadata", "error", "end":
		return true
	case "messages":
		return slices.Contains(modes, "messages-tuple")
	case "messages/metadata", "messages/partial", "messages/complete":
		return slices.Contains(modes, "messages")
	}
	return slices.Contains(modes, base)
}

// writeSSE writes an event whose data is data as JSON, without an id.
func writeSSE(w http.ResponseWriter, name string, data any) {
	b, _ := json.Marshal(data)
	_, _ = w.Write(appendSSE(nil, name, -1, b))
}

// appendSSE appends an event named name with data (one line of JSON) to
// buf as SSE, with its id when id >= 0.
func appendSSE(buf []byte, name string, id int64, data []byte) []byte {
	buf = append(buf, "event: "...)
	buf = append(buf, name...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...)
	if id >= 0 {
		buf = append(buf, "\nid: "...)
		buf = strconv.AppendInt(buf, id, 10)
	}
	return append(buf, "\n\n"...)
}

func (s *Server) cancelRunByID(run *Run, action string) {
	bg := s.bg
	unlock, err := s.locks.Lock(bg, run.ThreadID)
	if err != nil {
		return
	}
	defer unlock()
	cur, err := s.store.Run(bg, run.ID)
	if err != nil || finished(cur.Status) {
		return
	}
	if cur.Status == RunPending {
		// A pending run ends here: the thread's status, not counting
		// it, first, as a run's end records it (finishWith), so that a
		// client that finds the run ended finds the thread up to date.
		_ = s.refreshThread(bg, run.ThreadID, nil, "", nil, cur.ID)
	}
	ended, err := s.cancelEnds(bg, cur, action)
	if err != nil {
		s.log.Warn("cancelling a run", zapString("run", run.ID), zapError(err))
	}
	if cur.Status == RunPending && !ended {
		// The run did not end here (another instance claimed it since
		// it was read, or the cancellation failed): the thread counts
		// it again.
		_ = s.refreshThread(bg, run.ThreadID, nil, "", nil)
	}
}

// waitDone blocks until the run has ended, writing a newline every
// heartbeat when keepAlive; it reports false when the client left first.
func (s *Server) waitDone(ctx context.Context, w http.ResponseWriter, run *Run, keepAlive bool) (*Run, bool, error) {
	ch, release := s.hub.watch(run.ID, run.ThreadID)
	defer func() { release() }()
	hb := time.NewTicker(s.cfg.Heartbeat)
	defer hb.Stop()
	rc := http.NewResponseController(w)
	// No write deadline while it waits (see writeDeadline.idle); each
	// write renews it.
	wd := responseDeadline(w, s.cfg.WriteTimeout)
	closing := s.base.Done()
	for {
		wd.idle()
		cur, err := s.store.Run(ctx, run.ID)
		if errors.Is(err, ErrNotFound) {
			return nil, true, nil
		}
		if err == nil && finished(cur.Status) {
			return cur, true, nil
		}
		if err == nil && s.abandoned(cur) {
			return nil, true, s.abandonedError(cur)
		}
		select {
		case <-ch:
			ch, release = s.rewatch(run.ID, run.ThreadID, release)
		case <-closing:
			closing = nil // read the run again, once
		case <-hb.C:
			if keepAlive {
				if _, err := w.Write([]byte("\n")); err != nil {
					return nil, false, nil
				}
				_ = rc.Flush()
			}
		case <-ctx.Done():
			return nil, false, nil
		}
	}
}

// abandoned reports whether run is one this server, closed, will not
// start, and no other instance has claimed: a pending run, delayed or
// queued, with no worker of this server on its thread (a worker still
// there may claim it, and end it interrupted). A request waiting on it
// would wait until its client leaves.
func (s *Server) abandoned(run *Run) bool {
	if s.base.Err() == nil || run.Status != RunPending || run.Worker != "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.work[run.ThreadID]
}

// abandonedError is the error that ends a wait or a stream on run, which
// this closed server will not start (see abandoned), with its name. With a
// store shared by several instances (a [RunWatcher]) the run stays
// pending for another instance or the next start, which will run it: the
// error, RunPending, names the run and tells the client to join it, not
// to create it again (it would run twice). With a store of one instance
// it is errClosing: nothing else will start the run.
func (s *Server) abandonedError(run *Run) *requestError {
	if _, shared := s.store.(RunWatcher); !shared {
		return errClosing
	}
	return &requestError{status: http.StatusServiceUnavailable, name: "RunPending", msg: fmt.Sprintf(
		"server: closing (Server.Close was called): run %s is pending and another instance, or the next start, will run it: "+
			"do not create it again, join it with GET /threads/%s/runs/%s/join (or /stream) on another instance",
		run.ID, run.ThreadID, run.ID)}
}

// lastWord is the event that ends the stream of run runID, ended (cur)
// or deleted (cur nil), when its log holds no event past the client's:
// end with the run's status, or the error of a failed or deleted run.
func (s *Server) lastWord(ctx context.Context, runID string, cur *Run) (name string, data any) {
	if cur == nil {
		return "error", map[string]string{"error": "RunDeleted", "message": fmt.Sprintf("run %s was deleted: rolled back, or with its thread", runID)}
	}
	if cur.Status != RunError && cur.Status != RunTimeout {
		return "end", endEvent{RunID: cur.ID, Status: cur.Status}
	}
	// Only a failed run's error is read (from its log), not the thread's
	// values result reads for the others.
	res, _ := s.result(ctx, cur).(map[string]any)
	return "error", res["__error__"]
}

// result is what /wait and /join answer for an ended run: the thread's
// values (with __interrupt__ when it paused), as for any interrupted run
// for one cancelled before it started (which left the thread as it was),
// or __error__ (of a failed run).
func (s *Server) result(ctx context.Context, run *Run) any {
	if run == nil {
		return map[string]any{"__error__": map[string]string{"error": "RunDeleted", "message": "the run was rolled back"}}
	}
	if run.Status == RunError || run.Status == RunTimeout {
		return map[string]any{"__error__": map[string]string{"error": s.errorNameOf(ctx, run.ID), "message": run.Error}}
	}
	t, err := s.store.Thread(ctx, run.ThreadID)
	if err != nil {
		return map[string]any{}
	}
	var vals map[string]json.RawMessage
	if json.Unmarshal(t.Values, &vals) != nil || vals == nil {
		if len(t.Values) > 0 && string(t.Values) != "null" {
			return t.Values
		}
		return map[string]any{}
	}
	var ins []Interrupt
	for _, v := range t.Interrupts {
		ins = append(ins, v...)
	}
	if len(ins) > 0 {
		b, _ := json.Marshal(ins)
		vals["__interrupt__"] = b
	}
	return vals
}

// errorPage is how many events errorNameOf reads at a time from a store
// that is no LastEventReader.
const errorPage = 256

// errorNameOf returns the name of the error that ended the failed run
// runID: that of its newest error event, which the run's end recorded,
// read alone from a LastEventReader (the log of a long run holds up to
// Config.MaxRunEvents events); "Error" when there is none. It is not
// always the log's last event: an execution that lost the run's lease
// may append events after the run's end. From another store it pages
// through the log, keeping the last error event's name.
func (s *Server) errorNameOf(ctx context.Context, runID string) string {
	name := "Error"
	take := func(ev Event) {
		if ev.Name != "error" {
			return
		}
		var e map[string]string
		if json.Unmarshal(ev.Data, &e) == nil && e["error"] != "" {
			name = e["error"]
		}
	}
	if lr, ok := s.store.(LastEventReader); ok {
		if ev, found, err := lr.LastEvent(ctx, runID, "error"); err == nil && found {
			take(ev)
		}
		return name
	}
	for after := int64(-1); ; {
		evs, _, err := s.store.Events(ctx, runID, after, errorPage)
		if err != nil || len(evs) == 0 || evs[len(evs)-1].ID <= after {
			return name
		}
		for _, ev := range evs {
			take(ev)
		}
		after = evs[len(evs)-1].ID
	}
}

func (s *Server) wait(w http.ResponseWriter, r *http.Request, run *Run, cancel bool) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	cur, ok, err := s.waitDone(r.Context(), w, run, true)
	if err != nil {
		// The status is sent already: the body says why, with the name
		// the error carries (abandonedError's).
		name := "ServiceUnavailable"
		if re := (*requestError)(nil); errors.As(err, &re) && re.name != "" {
			name = re.name
		}
		b, _ := json.Marshal(map[string]any{"__error__": map[string]string{"error": name, "message": err.Error()}})
		_, _ = w.Write(b)
		return
	}
	if !ok {
		if cancel {
			s.cancelRunByID(run, "interrupt")
		}
		return
	}
	b, _ := json.Marshal(s.result(r.Context(), cur))
	_, _ = w.Write(b)
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	t, err := s.ownThread(r, r.PathValue("tid"))
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	limit, offset := 10, 0
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil && !errors.Is(err, strconv.ErrRange) {
			writeError(w, errorf(422, "limit: %q is not a whole number; use 1 to 1000, and offset for the next page", clip(v)))
			return
		}
		if err != nil || limit < 1 || limit > 1000 {
			writeError(w, errorf(422, "limit: %q is out of range; use 1 to 1000, and offset for the next page", clip(v)))
			return
		}
	}
	if v := q.Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			writeError(w, errorf(422, "offset: %q is not a non-negative whole number", clip(v)))
			return
		}
	}
	status := q.Get("status")
	if statuses := []string{RunPending, RunRunning, RunSuccess, RunError, RunTimeout, RunInterrupted}; status != "" && !slices.Contains(statuses, status) {
		writeError(w, errorf(422, "status: %q is not one of %s; leave it out for every run", status, strings.Join(statuses, ", ")))
		return
	}
	// The store reads the page alone, newest first, and one run more
	// than the limit: that run, or the one past the byte budget that a
	// store cutting at RunQuery.MaxBytes returns, says there are more.
	budget := s.responseBudget()
	runs, err := s.store.Runs(r.Context(), RunQuery{ThreadID: t.ID, Status: status, Newest: true, Offset: offset, Limit: limit + 1, MaxBytes: budget})
	if err != nil {
		writeError(w, err)
		return
	}
	more := len(runs) > limit
	pg, cut := cutBytes(runs[:min(len(runs), limit)], budget, (*Run).Size)
	if !more && !cut && len(pg) > 0 && budget < math.MaxInt {
		// A store that stops before the run past the budget, rather
		// than returning it (RunQuery.MaxBytes), leaves a page near
		// the budget: taken for a cut one, so that a client pages on.
		size := 0
		for _, run := range pg {
			size += run.Size()
		}
		cut = size > budget-budget/8
	}
	markTruncated(w, cut)
	if more || cut {
		w.Header().Set("X-Pagination-Next", strconv.Itoa(offset+len(pg)))
	}
	out := []map[string]any{}
	for _, run := range pg {
		out = append(out, runJSON(run))
	}
	writeJSON(w, 200, out)
}

// lastEventID returns the id of the last event of the run's log, and
// false when it holds none: read alone from a store that is a
// LastEventIDReader, else from the whole log.
func (s *Server) lastEventID(ctx context.Context, runID string) (int64, bool, error) {
	if lr, ok := s.store.(LastEventIDReader); ok {
		return lr.LastEventID(ctx, runID)
	}
	evs, _, err := s.store.Events(ctx, runID, -1, 0)
	if err != nil || len(evs) == 0 {
		return 0, false, err
	}
	return evs[len(evs)-1].ID, true, nil
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.ownRun(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, runJSON(run))
}

func (s *Server) deleteRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.ownRun(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if !finished(run.Status) {
		writeError(w, errorf(http.StatusConflict, "run %s is %s; cancel it before deleting it", run.ID, run.Status))
		return
	}
	if err := s.store.DeleteRun(r.Context(), run.ID); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) joinRun(w http.ResponseWriter, r *http.Request) {
	run, cancel, ok := s.joinable(w, r)
	if !ok {
		return
	}
	s.wait(w, r, run, cancel)
}

// joinable returns the caller's run of r that joinRun and joinStream
// join, and whether its query asks to cancel the run on disconnect; or
// writes the error and returns false: the run is not the caller's, the
// server is shutting down and the run would never finish, or
// cancel_on_disconnect is not a boolean.
func (s *Server) joinable(w http.ResponseWriter, r *http.Request) (run *Run, cancel, ok bool) {
	run, err := s.ownRun(r)
	if err != nil {
		writeError(w, err)
		return nil, false, false
	}
	if s.shut.Load() && !finished(run.Status) {
		writeError(w, errClosing) // it would wait here for ever
		return nil, false, false
	}
	cancel, err = queryBool(r, "cancel_on_disconnect", false)
	if err != nil {
		writeError(w, err)
		return nil, false, false
	}
	return run, cancel, true
}

func (s *Server) joinStream(w http.ResponseWriter, r *http.Request) {
	run, cancel, ok := s.joinable(w, r)
	if !ok {
		return
	}
	var after int64
	switch v := r.Header.Get("Last-Event-ID"); v {
	case "":
		// Live events only: start after the last one logged.
		last, ok, err := s.lastEventID(r.Context(), run.ID)
		if err != nil {
			writeError(w, err)
			return
		}
		after = -1
		if ok {
			after = last
		}
	default:
		n, err := strconv.ParseInt(v, 10, 64)
		// The largest int64 is refused: the event after it has no id, and
		// the stores would wrap around to the log's start.
		if err != nil || n < -1 || n == math.MaxInt64 {
			writeError(w, errorf(422, "Last-Event-ID: %q is not an event id of this server (a number, or -1 for the whole log)", clip(v)))
			return
		}
		after = n
	}
	modes, err := checkModes(r.URL.Query()["stream_mode"])
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Location", runPath(run, false)+"/stream")
	s.stream(w, r, run, after, modes, cancel, nil)
}

// writeDeadline renews a stream's write deadline so that each write may
// wait at least d and at most 5/4 of d: renew sets the deadline to 5/4 of
// d from now only when less than d is left, so that the events of a run,
// written in quick succession, reset the connection's deadline (a timer
// of the runtime's, under its lock) once rather than before each write.
type writeDeadline struct {
	w     http.ResponseWriter // the connection's, for http.ResponseController
	d     time.Duration       // Config.StreamWriteTimeout or WriteTimeout; not positive: no bound
	until time.Time           // the deadline set; zero before the first
}

// renew gives the next write at least d.
func (w *writeDeadline) renew() {
	if w.d <= 0 {
		return
	}
	now := time.Now()
	if !w.until.IsZero() && w.until.Sub(now) >= w.d {
		return
	}
	w.until = now.Add(w.d + w.d/4)
	_ = http.NewResponseController(w.w).SetWriteDeadline(w.until)
}

// idle clears the deadline, set by renew, while the answer waits with
// nothing to write (a run's next event, the next heartbeat): a deadline
// bounds writes in progress, not the waits between them, and over HTTP/2
// it resets the stream when it passes, even with no write in progress,
// where a Heartbeat longer than the timeout would end every wait. The
// next renew sets it again.
func (w *writeDeadline) idle() {
	if w.until.IsZero() {
		return
	}
	w.until = time.Time{}
	_ = http.NewResponseController(w.w).SetWriteDeadline(time.Time{})
}

// responseDeadline returns the write deadline of the answer w writes,
// bounding each write by d from now on: the one the server's logWriter
// renews at each write (Config.WriteTimeout until then), or a new one.
func responseDeadline(w http.ResponseWriter, d time.Duration) *writeDeadline {
	if lw, ok := w.(*logWriter); ok {
		lw.wd.d = d
		return &lw.wd
	}
	return &writeDeadline{w: w, d: d}
}

// checkModes refuses a stream mode that is not one of streamModes and
// answers the modes once each, in the order first given: a stream
// matches each event against its modes, and a mode given a thousand
// times (in a query, say) would be matched a thousand times.
func checkModes(modes []string) ([]string, error) {
	out := make([]string, 0, min(len(modes), len(streamModes)))
	for _, m := range modes {
		if slices.Contains(unservedModes, m) {
			return nil, errorf(422, "stream_mode: %q is not served by this server; use %s", m, strings.Join(streamModes, ", "))
		}
		if !slices.Contains(streamModes, m) {
			return nil, errorf(422, "stream_mode: %q is not one of %s", m, strings.Join(streamModes, ", "))
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// cancelAction reads a cancel's action query parameter: interrupt (the
// default) or rollback.
func cancelAction(r *http.Request) (string, error) {
	action := r.URL.Query().Get("action")
	if action == "" {
		action = "interrupt"
	}
	if action != "interrupt" && action != "rollback" {
		return "", errorf(422, "action: %q is not interrupt or rollback", action)
	}
	return action, nil
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.ownRun(r)
	if err != nil {
		writeError(w, err)
		return
	}
	action, err := cancelAction(r)
	if err != nil {
		writeError(w, err)
		return
	}
	wait, err := queryBool(r, "wait", false)
	if err != nil {
		writeError(w, err)
		return
	}
	if finished(run.Status) {
		// LangGraph's servers leave a run that ended as it is and answer
		// as for a cancel (the JS SDK's runs.cancel then resolves): there
		// is nothing to stop, and a client racing the run's end is not
		// told it failed.
		if wait {
			w.WriteHeader(http.StatusNoContent)
		} else {
			w.WriteHeader(http.StatusAccepted)
		}
		return
	}
	s.cancelRunByID(run, action)
	if !wait {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if _, ok, err := s.waitDone(r.Context(), w, run, false); err != nil {
		writeError(w, err)
		return
	} else if !ok {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// maxCancelRuns bounds the run_ids of one POST /runs/cancel.
const maxCancelRuns = 1000

// cancelRuns is POST /runs/cancel (the JS SDK's runs.cancelMany): it
// cancels, with query action interrupt (the default) or rollback, the
// runs run_ids of thread thread_id, or the caller's runs of status
// pending, running or all (of thread_id, when given). A run of run_ids
// that is not the caller's is 404 before any is cancelled; one that
// ended is left as it is, as by POST .../runs/{run_id}/cancel. Answers 204.
func (s *Server) cancelRuns(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ThreadID string   `json:"thread_id"`
		RunIDs   []string `json:"run_ids"`
		Status   string   `json:"status"`
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	action, err := cancelAction(r)
	if err != nil {
		writeError(w, err)
		return
	}
	switch {
	case body.Status != "" && len(body.RunIDs) > 0:
		writeError(w, errorf(422, "status and run_ids: give one or the other, not both"))
		return
	case body.Status == "" && (len(body.RunIDs) == 0 || body.ThreadID == ""):
		writeError(w, errorf(422, "run_ids and thread_id, or status: give the runs to cancel by id (with their thread), or by status"))
		return
	case body.Status != "" && body.Status != "pending" && body.Status != "running" && body.Status != "all":
		writeError(w, errorf(422, "status: %q is not one of pending, running, all", body.Status))
		return
	case len(body.RunIDs) > maxCancelRuns:
		writeError(w, errorf(422, "run_ids: %d ids; give at most %d per request", len(body.RunIDs), maxCancelRuns))
		return
	}
	ctx := r.Context()
	var runs []*Run
	if len(body.RunIDs) > 0 {
		t, err := s.ownThread(r, body.ThreadID)
		if err != nil {
			writeError(w, err)
			return
		}
		for i, id := range body.RunIDs {
			rid, err := canonUUID(fmt.Sprintf("run_ids[%d]", i), id)
			if err != nil {
				writeError(w, err)
				return
			}
			run, err := s.store.Run(ctx, rid)
			if errors.Is(err, ErrNotFound) || err == nil && run.ThreadID != t.ID {
				writeError(w, errorf(http.StatusNotFound, "run %s of thread %s not found", rid, t.ID))
				return
			}
			if err != nil {
				writeError(w, err)
				return
			}
			runs = append(runs, run)
		}
	} else {
		var threads []string
		if body.ThreadID != "" {
			t, err := s.ownThread(r, body.ThreadID)
			if err != nil {
				writeError(w, err)
				return
			}
			threads = []string{t.ID}
		} else {
			// The caller's busy threads: a thread with a pending or
			// running run is busy.
			const page = 100
			for offset := 0; ; offset += page {
				ts, _, err := s.store.SearchThreads(ctx, ThreadQuery{Owner: principal(r), Status: ThreadBusy, Limit: page, Offset: offset})
				if err != nil {
					writeError(w, err)
					return
				}
				for _, t := range ts {
					threads = append(threads, t.ID)
				}
				if len(ts) < page {
					break
				}
			}
		}
		for _, tid := range threads {
			active, err := s.activeRuns(ctx, tid)
			if err != nil {
				writeError(w, err)
				return
			}
			for _, run := range active {
				if body.Status == "all" || run.Status == body.Status {
					runs = append(runs, run)
				}
			}
		}
	}
	for _, run := range runs {
		if !finished(run.Status) {
			s.cancelRunByID(run, action)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
