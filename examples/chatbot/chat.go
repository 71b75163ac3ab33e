package chatbot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/tool"
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
	if r.UserID != "" && !idPattern.MatchString(r.UserID) {
		return r, &RequestError{Field: "user_id", Reason: idRule}
	}
	if r.Model != "" {
		if _, ok := b.client.Registry().Lookup(r.Model); !ok && !strings.Contains(r.Model, ":") {
			return r, &RequestError{Field: "model", Reason: fmt.Sprintf("%q is not a known model; use one of %s", r.Model, strings.Join(b.client.Registry().Names(), ", "))}
		}
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

// Chat runs one turn of a conversation and yields its events as they
// happen: supervisor.thinking and supervisor.decided, tool.* or workflow.*
// events, response.chunk events with the answer, token.usage, and finally
// response.done (or clarify.request when the bot asks a question). An
// invalid request yields a *RequestError; a failed turn yields its error
// after the events before it. Breaking out of the loop, or cancelling ctx,
// cancels the turn (and its MCP calls) and waits for it to stop. Turns of
// one conversation run one at a time, in the order they arrive.
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

		ctx, cancel := context.WithTimeout(ctx, b.cfg.TurnTimeout)
		defer cancel()
		untrack := b.locks.track(&cancel)
		defer untrack()

		em := event.NewEmitter(event.EmitterConfig{RequestID: req.RequestID, Logger: b.log})
		// The turn's first event goes out as soon as the turn is accepted,
		// before it waits for the conversation's lock, lists the tools and
		// loads the thread: the client sees progress at once.
		if err := em.Emit(ctx, event.SupervisorThinking{Message: "Analyzing your question..."}); err != nil {
			yield(event.Event{}, err)
			return
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			em.CloseWithError(b.runTurn(ctx, req, em))
		}()
		defer func() {
			cancel()
			<-done
		}()
		for ev, err := range event.UserFacing(em.Events(ctx)) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// runTurn runs the chat graph for one request on the conversation's
// thread, with the request's MCP session and question table.
func (b *Bot) runTurn(ctx context.Context, req Request, em *event.Emitter) error {
	unlock, err := b.locks.lock(ctx, req.ConversationID)
	if err != nil {
		return err
	}
	defer unlock()
	// Then a running slot (Config.MaxRunningTurns), taken after the lock
	// so that only a turn that can run holds one.
	slot := &turnSlot{slots: b.running}
	if err := slot.take(ctx); err != nil {
		return err
	}
	defer slot.give()

	summaries, err := b.provider.Summaries(ctx)
	if err != nil {
		return fmt.Errorf("chatbot: listing tools: %w", err)
	}
	tools := make([]agent.ToolSummary, 0, len(summaries))
	for _, s := range summaries {
		tools = append(tools, agent.ToolSummary{Name: s.Name, Description: s.Description})
	}
	elicit := operator.NewElicitations(em)
	b.mu.Lock()
	b.pending[req.RequestID] = elicit
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.pending, req.RequestID)
		b.mu.Unlock()
	}()
	asker := slotFreeElicitor{inner: elicit, slot: slot} // no slot held while a person answers
	session := b.mcpReg.NewSession(tool.MCPCallbacks(em, asker))
	defer session.Close()

	r := &turnRun{em: em, caller: tool.MCPSession(session), elicit: asker,
		turn: memory.NewTurn(req.ConversationID, req.Message), tools: tools, writer: cmp.Or(req.Model, b.cfg.WriterModel),
		endTools: func() { _ = session.Close() }, slot: slot}
	learn := b.cog != nil && req.UserID != ""
	var start time.Time
	if learn {
		start = time.Now()
		r.user = req.UserID
		ctx = cognition.WithUser(ctx, req.UserID) // for the assembler's "cognition" source
	}
	ctx = context.WithValue(ctx, runKey{}, r)
	ctx = graph.WithConfig(ctx, graph.RunConfig{RunID: req.RequestID})
	conv := b.graph.Thread(req.ConversationID)
	input := State{ConversationID: req.ConversationID, RequestID: req.RequestID, Query: req.Message}
	final, err := conv.Invoke(ctx, input)
	if errors.Is(err, graph.ErrThreadPaused) {
		// The conversation's previous turn stopped part-way (its client
		// went away, or it failed): close that turn, then run this one.
		if _, uerr := conv.Update(ctx, graph.Update[State]{}, graph.AsNode(NodeRespond)); uerr != nil {
			return fmt.Errorf("chatbot: closing the interrupted previous turn of %s: %w", req.ConversationID, uerr)
		}
		final, err = conv.Invoke(ctx, input)
	}
	// A turn its client cancelled (or Close) is not the bot's to learn
	// from; an answered, blocked or failed one is.
	if learn && ctx.Err() == nil {
		b.observeTurn(req, final, err, start)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		b.log.Warn("chatbot: turn failed")
		return fmt.Errorf("chatbot: turn %s: %w", req.RequestID, err)
	}
	return nil
}

// turnSlot is one turn's share of the bot's running slots
// (Config.MaxRunningTurns): held while the turn runs, given up while it
// waits for a person to answer a question. A nil slots channel means no
// bound.
type turnSlot struct {
	slots chan struct{}

	mu      sync.Mutex
	held    bool
	waiting int // questions being asked
}

// take waits for a slot.
func (t *turnSlot) take(ctx context.Context) error {
	if t.slots == nil {
		return nil
	}
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.waiting > 0 { // a question started meanwhile
		<-t.slots
		return nil
	}
	t.held = true
	return nil
}

// give gives the slot back, if the turn holds it.
func (t *turnSlot) give() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held {
		t.held = false
		<-t.slots
	}
}

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
		<-t.slots
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

// slotFreeElicitor asks through inner without holding the turn's running
// slot, so that turns waiting for people cannot starve the others.
type slotFreeElicitor struct {
	inner operator.Elicitor
	slot  *turnSlot
}

func (e slotFreeElicitor) Elicit(ctx context.Context, req event.ElicitationRequest) (event.ElicitationResponse, error) {
	answered := e.slot.asking()
	resp, err := e.inner.Elicit(ctx, req)
	if serr := answered(ctx); serr != nil && err == nil {
		return resp, serr
	}
	return resp, err
}
