package chatbot

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/mcp/mcptool"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// Request is one chat turn.
type Request struct {
	// ConversationID names the conversation the message belongs to. Empty
	// starts a new conversation with a generated id; the id is in every
	// event's request and in the Sync response.
	ConversationID string `json:"conversation_id,omitempty"`
	// Message is the user's message. Required.
	Message string `json:"message"`
	// UserID names the user, for cognition (Config.Cognition): the turn
	// is enriched with what the bot learned about the user in earlier
	// conversations, and learned from. Empty means an anonymous turn,
	// neither enriched nor learned from (no user's memory is shared with
	// another). It is validated like ConversationID, and ignored when
	// cognition is off.
	UserID string `json:"user_id,omitempty"`
	// RequestID names the request in events and logs. Empty means a
	// generated id.
	RequestID string `json:"request_id,omitempty"`
	// Model is the model alias that writes the answer ("haiku", "sonnet",
	// "opus" or one registered in the agent's registry). Empty means
	// Config.WriterModel.
	Model string `json:"model,omitempty"`
	// Context is what the client knows that the bot should take into
	// account (the page it is on, the user's locale...): string keys to
	// JSON values, at most maxClientContextKeys of them and
	// maxClientContextBytes as JSON. The supervisor sees it with the
	// conversation's context.
	Context map[string]any `json:"context,omitempty"`
	// Resumable, over HTTP (POST /api/v1/chat), detaches the turn from
	// the connection: a client that goes away no longer cancels it; the
	// turn runs until it ends or Config.TurnTimeout passes, and its events
	// can be fetched again with GET /api/v1/chat/stream/{request_id} and a
	// Last-Event-ID header until Config.ResumeLinger after it ends. False
	// (the default) means a client that disconnects cancels the turn and
	// its MCP calls. [Bot.Chat] ignores it: there the caller's context
	// decides.
	Resumable bool `json:"resumable,omitempty"`
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)

// idRule says what idPattern accepts.
const idRule = "must be 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit"

// normalize checks r and fills in the generated ids.
func (b *Bot) normalize(r Request) (Request, error) {
	if strings.TrimSpace(r.Message) == "" {
		return r, &RequestError{Field: "message", Reason: "is required; send the user's message as a non-empty string"}
	}
	if len(r.Message) > b.cfg.MaxMessageLen {
		return r, &RequestError{Field: "message", Reason: fmt.Sprintf("is %d bytes long; the limit is %d", len(r.Message), b.cfg.MaxMessageLen)}
	}
	if r.ConversationID == "" {
		r.ConversationID = uuid.NewString()
	} else if !idPattern.MatchString(r.ConversationID) {
		return r, &RequestError{Field: "conversation_id", Reason: "must be 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit"}
	}
	if len(r.Context) > maxClientContextKeys {
		return r, &RequestError{Field: "context", Reason: fmt.Sprintf("has %d keys; the limit is %d", len(r.Context), maxClientContextKeys)}
	}
	if len(r.Context) > 0 {
		if b, err := json.Marshal(r.Context); err != nil || len(b) > maxClientContextBytes {
			return r, &RequestError{Field: "context", Reason: fmt.Sprintf("must be a JSON object of at most %d bytes", maxClientContextBytes)}
		}
	}
	if r.UserID != "" && !idPattern.MatchString(r.UserID) {
		return r, &RequestError{Field: "user_id", Reason: idRule}
	}
	if r.Model != "" && !slices.Contains(b.models, r.Model) {
		// Only configured models: each model a client could name would
		// cost a model of the provider's choosing and state of its own.
		return r, &RequestError{Field: "model", Reason: fmt.Sprintf("%q is not an allowed model; use one of %s (Config.Models)", clip(r.Model, 64), strings.Join(b.models, ", "))}
	}
	if r.RequestID == "" {
		r.RequestID = "req-" + uuid.NewString()
	} else if !idPattern.MatchString(r.RequestID) {
		return r, &RequestError{Field: "request_id", Reason: "must be 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit"}
	} else if r.RequestID == "history" {
		return r, &RequestError{Field: "request_id", Reason: `"history" is reserved (GET /api/v1/chat/stream/history is conversation "stream"'s history); pick another id`}
	}
	return r, nil
}

// Bounds of a request's client context.
const (
	maxClientContextKeys  = 32
	maxClientContextBytes = 4096
)

// clientContext renders a request's client context for the supervisor:
// one "key": value line per key, sorted, keys and values as JSON (so that
// no key or value can add a line).
func clientContext(c map[string]any) string {
	if len(c) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(c))
	var sb strings.Builder
	for _, k := range keys {
		v, _ := json.Marshal(c[k])
		key, _ := json.Marshal(k)
		fmt.Fprintf(&sb, "%s: %s\n", key, v)
	}
	return sb.String()
}

// withClientContext puts the client's context before the conversation's.
func withClientContext(client, conversation string) string {
	if client == "" {
		return conversation
	}
	return strings.TrimSpace("Client context:\n" + client + "\n" + conversation)
}

// clip is s cut to at most n bytes, for quoting client input in errors.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// Chat runs one turn of a conversation and yields its events as they
// happen: supervisor.thinking and supervisor.decided, tool.* or workflow.*
// events, response.chunk events with the answer, token.usage, and finally
// response.done (or clarify.request when the bot asks a question). An
// invalid request yields a *RequestError, and a turn that would start
// one conversation more than Config.MaxConversations, or add a turn to a
// conversation holding Config.MaxConversationTurns, an error wrapping
// ErrConversationLimit, before any event (or, when the turns of the
// conversation before it filled it, after the first); a turn cancelled by
// DeleteConversation yields an error wrapping ErrUnknownConversation; a
// failed turn yields its error
// after the events before it. Breaking out of the loop, or cancelling ctx,
// cancels the turn (and its MCP calls) and waits for it to stop. Turns of
// one conversation run one at a time, in the order they arrive.
//
// The turn belongs to ctx's principal ([WithPrincipal]; LocalPrincipal
// without one): its conversation, questions and user are that
// principal's, and no other principal can name them.
func (b *Bot) Chat(ctx context.Context, req Request) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		req, err := b.normalize(req)
		if err != nil {
			yield(event.Event{}, err)
			return
		}
		if err := b.begin(); err != nil {
			yield(event.Event{}, err)
			return
		}
		defer b.active.Done()

		principal := PrincipalFromContext(ctx)
		if !idPattern.MatchString(principal) {
			yield(event.Event{}, fmt.Errorf("chatbot: WithPrincipal: principal %q %s", clip(principal, 64), idRule))
			return
		}
		if _, err := b.admit(ctx, principal, req.ConversationID); err != nil {
			yield(event.Event{}, err)
			return
		}
		ctx, stop := context.WithCancelCause(ctx)
		defer stop(nil)
		ctx, cancel := context.WithTimeout(ctx, b.cfg.TurnTimeout)
		defer cancel()
		// Close and DeleteConversation cancel it; it waits while the
		// conversation list forgets its conversation.
		untrack, err := b.turnsRun.track(ctx, &stop, scoped(principal, req.ConversationID))
		if err != nil {
			yield(event.Event{}, err)
			return
		}
		defer untrack()

		em := event.NewEmitter(event.EmitterConfig{RequestID: req.RequestID, Logger: b.log})
		// The turn's first event goes out as soon as the turn is accepted,
		// before it waits for the conversation's lock, lists the tools and
		// loads the thread: the client sees progress at once.
		if err := em.Emit(ctx, chatevent.SupervisorThinking{Message: "Analyzing your question..."}); err != nil {
			yield(event.Event{}, err)
			return
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			em.CloseWithError(b.runTurn(ctx, principal, req, em, stop))
		}()
		defer func() {
			cancel()
			<-done
		}()
		for ev, err := range em.Events(ctx) {
			if err != nil && ctx.Err() != nil {
				err = cmp.Or(context.Cause(ctx), err) // why the turn was stopped: Close, a timeout
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// runTurn runs the chat graph for one request of principal on the
// conversation's thread, with the request's MCP session and question
// table. stop cancels the turn with a cause (Close does, through the
// turn's entry).
func (b *Bot) runTurn(ctx context.Context, principal string, req Request, em *event.Emitter, stop context.CancelCauseFunc) error {
	thread := scoped(principal, req.ConversationID)
	unlock, err := b.convs.Lock(ctx, thread)
	if err != nil {
		return cmp.Or(context.Cause(ctx), err)
	}
	defer unlock()
	// Chat admitted the turn before it waited for the lock; the turns
	// before it may since have filled the conversation, or deleted it (so
	// this turn starts one, which counts against Config.MaxConversations).
	fresh, err := b.admit(ctx, principal, req.ConversationID)
	if err != nil {
		return err
	}
	// A conversation the principal keeps has its entry refreshed now,
	// before the turn waits for a running slot and loads the
	// conversation: a prune that reads the list from now on, on any
	// instance, sees the entry used and keeps the conversation (see
	// Bot.forgetWithList). A conversation stored but not listed is listed
	// again so.
	//
	// A new conversation is listed now, counted and listed in one step
	// (see reserve); if the turn ends with nothing of the conversation
	// stored (it stopped before its graph started, or failed before its
	// exchange was stored), the entry goes again, under the
	// conversation's lock still held.
	if !fresh {
		_ = b.convIndex.touch(ctx, principal, req.ConversationID, req.Message, true) // logged; the stored history stays
	} else {
		if err := b.reserve(ctx, principal, req.ConversationID, req.Message); err != nil {
			return err
		}
		defer func() {
			ctx := context.WithoutCancel(ctx)
			if st, err := b.convs.Store().Load(ctx, thread, 0); err != nil || st.Last > 0 || st.Summary.Text != "" {
				return // stored (or unknown: kept listed, counted)
			}
			if _, err := b.convIndex.remove(ctx, principal, req.ConversationID); err != nil {
				b.log.Warn("chatbot: removing an unstarted conversation from the list failed", zap.String("conversation_id", req.ConversationID), zap.Error(err))
			}
		}()
	}
	// Then a running slot (Config.MaxRunningTurns), taken after the lock
	// so that only a turn that can run holds one.
	slot := &turnSlot{slots: b.running, principal: principal}
	if err := slot.take(ctx); err != nil {
		return cmp.Or(context.Cause(ctx), err)
	}
	defer slot.end()

	summaries, err := b.provider.ToolSummaries(ctx)
	if err != nil {
		return fmt.Errorf("chatbot: listing tools: %w", err)
	}
	tools := make([]model.ToolDef, 0, len(summaries))
	for _, s := range summaries {
		tools = append(tools, model.ToolDef{Name: s.Name, Description: s.Description})
	}
	// The turn's questions are its own, whatever its request id: another
	// turn with the same id has its own entry.
	entry := &turnEntry{principal: principal, elicit: operator.NewElicitations(wire{em, b.log}), cancel: stop}
	b.mu.Lock()
	b.turns[entry] = struct{}{}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.turns, entry)
		b.mu.Unlock()
	}()
	asker := questionAsker{bot: b, em: em, turn: entry, slot: slot} // no slot held while a person answers
	session := b.mcpReg.NewSession(mcptool.Callbacks(wire{em, b.log}, asker))
	defer session.Close()

	deps := &turnDeps{em: em, report: wire{em, b.log}, caller: mcptool.Session(session), elicit: asker,
		turn: memory.NewTurn(thread, req.Message), tools: tools, meter: new(meter),
		endTools: func() { _ = session.Close() }, slot: slot}
	input := State{ConversationID: thread, RequestID: req.RequestID, Query: req.Message,
		ClientContext: clientContext(req.Context), Writer: cmp.Or(req.Model, b.cfg.WriterModel)}
	learn := b.cog != nil && req.UserID != ""
	user := scoped(principal, req.UserID) // a principal names its own users only
	var start time.Time
	if learn {
		start = time.Now()
		input.User = user
		ctx = cognition.WithUser(ctx, user) // for the assembler's "cognition" source
	}
	ctx = context.WithValue(ctx, runKey{}, deps)
	// The graph keeps no checkpoints; its runs name the conversation as
	// their thread, so traces (agentgraph.thread.id) group a conversation's
	// turns.
	ctx = graph.WithConfig(ctx, graph.RunConfig{RunID: req.RequestID, ThreadID: thread})
	// Each turn is a run of its own: the conversation's history is in
	// memory.Conversations, so a turn that stopped part-way (its client
	// went away, it failed) leaves nothing that the next turn continues,
	// and the next turn starts clean.
	final, err := b.graph.Invoke(ctx, input)
	// A turn its client cancelled (or Close) is not the bot's to learn
	// from; an answered, blocked or failed one is.
	if learn && ctx.Err() == nil {
		b.observeTurn(req, user, thread, final, err, start)
	}
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		b.log.Warn("chatbot: turn failed", zap.String("request_id", req.RequestID), zap.String("conversation_id", thread), zap.Error(err))
		return fmt.Errorf("chatbot: turn %s: %w", req.RequestID, err)
	}
	return nil
}

// turnSlot is one turn's share of the bot's running slots
// (Config.MaxRunningTurns): held while the turn runs, given up while it
// waits for a person to answer a question. A nil slots means no bound.
type turnSlot struct {
	slots     *runSlots
	principal string // whose turn it is, for the slots' fairness

	mu      sync.Mutex
	held    bool
	waiting int  // questions being asked
	done    bool // the turn has ended: it takes no slot again
}

// take waits for a slot. A turn that has ended takes none: a question's
// handler can outlive its turn (the MCP transport runs it, and nothing
// waits for it), and a slot it took then would never be given back.
func (t *turnSlot) take(ctx context.Context) error {
	if t.slots == nil {
		return nil
	}
	t.mu.Lock()
	done := t.done
	t.mu.Unlock()
	if done {
		return errTurnOver
	}
	if err := t.slots.acquire(ctx, t.principal); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done { // the turn ended meanwhile
		t.slots.release(t.principal)
		return errTurnOver
	}
	if t.waiting > 0 { // a question started meanwhile
		t.slots.release(t.principal)
		return nil
	}
	t.held = true
	return nil
}

// end gives the slot back, if the turn holds it, when the turn ends: no
// slot is taken for it from then on.
func (t *turnSlot) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	if t.held {
		t.held = false
		t.slots.release(t.principal)
	}
}

// errTurnOver is take's error for a turn that has ended.
var errTurnOver = errors.New("chatbot: the turn has ended; it takes no running slot")

// asking gives the slot up while a question waits for its answer, and
// returns the function that takes one again when the answer came.
func (t *turnSlot) asking() (answered func(context.Context) error) {
	if t.slots == nil {
		return func(context.Context) error { return nil }
	}
	t.mu.Lock()
	t.waiting++
	if t.held {
		t.held = false
		t.slots.release(t.principal)
	}
	t.mu.Unlock()
	return func(ctx context.Context) error {
		t.mu.Lock()
		t.waiting--
		last := t.waiting == 0
		t.mu.Unlock()
		if !last {
			return nil
		}
		return t.take(ctx)
	}
}

// questionAsker asks a turn's questions through its table, without
// holding the turn's running slot (so that turns waiting for people
// cannot starve the others), for at most Config.AnswerTimeout, and not
// once Close has begun: then no one is expected to answer, and the turn
// ends.
type questionAsker struct {
	bot  *Bot
	em   *event.Emitter
	turn *turnEntry
	slot *turnSlot
}

func (q questionAsker) Elicit(ctx context.Context, req elicit.Request) (elicit.Response, error) {
	b := q.bot
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		q.turn.cancel(errShutdown)
		return elicit.Response{}, errShutdown
	}
	if max := b.cfg.MaxPendingQuestions; max > 0 {
		if n := b.pendingQuestions(q.turn.principal); n >= max {
			b.mu.Unlock()
			b.log.Info("chatbot: a question refused: too many waiting", zap.String("principal", q.turn.principal), zap.Int("waiting", n))
			return elicit.Response{}, fmt.Errorf("chatbot: too many questions wait for this user's answers (%d, Config.MaxPendingQuestions); answer or cancel one of them, then try again, or go on without asking", n)
		}
	}
	q.turn.asking++
	if len(req.Schema) > 0 {
		if q.turn.schemas == nil {
			q.turn.schemas = map[string]json.RawMessage{}
		}
		q.turn.schemas[req.ElicitationID] = req.Schema
	}
	b.mu.Unlock()
	answered := q.slot.asking()
	actx, cancel := context.WithTimeout(ctx, b.cfg.AnswerTimeout)
	resp, err := q.turn.elicit.Elicit(actx, req)
	cancel()
	// The question no longer waits for a person, even while its turn
	// waits for a running slot below: it counts no more against
	// Config.MaxPendingQuestions, nor does Close end its turn for it.
	b.mu.Lock()
	q.turn.asking--
	delete(q.turn.schemas, req.ElicitationID)
	b.mu.Unlock()
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		b.log.Info("chatbot: a question went unanswered", zap.String("elicitation_id", req.ElicitationID), zap.Duration("waited", b.cfg.AnswerTimeout))
		err = fmt.Errorf("chatbot: no answer to the question within %s (Config.AnswerTimeout); go on without it", b.cfg.AnswerTimeout)
	}
	if ctx.Err() != nil {
		err = cmp.Or(context.Cause(ctx), err)
	}
	if err == nil {
		// The answer is part of the turn's story: the stream shows it
		// (the seed's elicitation.response).
		if eerr := q.em.Emit(ctx, chatevent.ElicitationResponse{Response: resp}); eerr != nil {
			err = eerr
		}
	}
	if serr := answered(ctx); serr != nil && err == nil {
		return resp, serr
	}
	return resp, err
}

// pendingQuestions counts the questions of principal's turns that wait for
// an answer. b.mu is held.
func (b *Bot) pendingQuestions(principal string) int {
	n := 0
	for t := range b.turns {
		if t.principal == principal {
			n += t.asking
		}
	}
	return n
}
