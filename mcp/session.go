package mcp

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// Progress is one progress notification of a call.
type Progress struct {
	Server string
	Tool   string
	// Call is the name the call was made with (ToolCall.Name): Tool when
	// the call named its server, the registry's name (as "kb__search") when
	// the session resolved it.
	Call string
	// Progress and Total are the raw values the server sent; Total is 0 when
	// the server did not say.
	Progress float64
	Total    float64
	Message  string
}

// Fraction returns progress as a value in [0, 1] when the server sent a
// total, and false otherwise.
func (p Progress) Fraction() (float64, bool) {
	if p.Total <= 0 {
		return 0, false
	}
	return min(max(p.Progress/p.Total, 0), 1), true
}

// ContentEvent is one content item of a call's result, delivered to
// Callbacks.Content.
type ContentEvent struct {
	Server string
	Tool   string
	// Call is the name the call was made with, as in [Progress].
	Call string
	// Index is the item's position in the result.
	Index int
	Item  toolresult.Content
}

// Callbacks receive what happens during a session's calls. Every field is
// optional. Progress, Content and Error are called one at a time, in order,
// from one goroutine per session, so they need no locking of their own; they
// should return quickly. Elicit may block until the user answers.
//
// The ctx given to Progress, Content and Error ends when the session
// closes, or when the call the callback reports on stops waiting for it
// (its context ended: see [Session.CallTool]); a callback that blocks
// (sends to a consumer, say) must return once it ends. One that does not
// is not waited for longer than [CallbackGrace] after its ctx ended: the
// call returns, or Close does, without it, and the manager logs (at warn
// level, ManagerConfig.Logger) that it was left running; the callbacks
// queued behind it then run after it returns.
type Callbacks struct {
	// Progress receives the progress notifications of the session's calls.
	// Every notification that reached the client before a call's result
	// has been delivered, in the order received, when CallTool returns;
	// one that arrives after the call returned (possible only when the
	// server sends progress and result on different streams, or writes
	// them out of order) is dropped, logged at debug level and counted in
	// [Health].LateProgress, so a call's progress never follows its end.
	// Two exceptions bound what a server can make a call wait for: while
	// ManagerConfig.MaxQueuedProgress notifications of the session wait
	// for this callback, more are dropped; and a call whose context ends
	// (or whose session closes) before its notifications were delivered
	// drops those still waiting rather than waits for them. Such a call
	// still waits for the callback running and for the callbacks of the
	// session's other calls queued before its own, at most
	// [CallbackGrace] (the context of its own callback running ends), so
	// the session's callbacks should return quickly. Both drops are
	// counted in [Health].DroppedProgress.
	Progress func(ctx context.Context, p Progress)
	// Elicit answers a server's request for user input during a call: the
	// request's Server and Tool name the call, its Mode is "form" or
	// "url". It blocks until the user answers, declines or cancels, or
	// ctx ends (the server is then told "cancel"). The answer is
	// completed with the schema's defaults and validated against it
	// before it goes back. Nil means the manager's ManagerConfig.Elicit,
	// else the request is declined.
	Elicit elicit.Func
	// Content receives each item of every result, before CallTool returns
	// (a call whose context ends before they were delivered returns the
	// context's error and drops them).
	Content func(ctx context.Context, ev ContentEvent)
	// Error receives every failed call, classified; a call the caller
	// cancelled is not reported.
	Error func(ctx context.Context, e *CallError)
}

// ToolCall is a request to call a tool of an MCP server: the server, the
// tool and its arguments, as [Session.CallTool] sends it. A model's request
// for a call (model.ToolCall, with the call's id and JSON arguments) is
// what a program turns into one.
type ToolCall struct {
	// Server names the server. Empty means the session resolves Name
	// through its Registry (sessions from Registry.NewSession only).
	Server string
	// Name is the tool's name: on Server when Server is set, else as the
	// registry lists it (possibly namespaced).
	Name      string
	Arguments map[string]any
}

// Session is one request's view of the MCP servers: its calls share
// callbacks, and Close cancels whatever is still running. Create one per
// request with [Manager.NewSession] or [Registry.NewSession] and
// `defer session.Close()`. A Session is safe for concurrent use.
type Session struct {
	m       *Manager
	cb      Callbacks
	resolve func(ctx context.Context, name string) (server, tool string, err error)
	// refused says why the registry refuses a tool a call names with its
	// server, or nil (nil for a manager's session).
	refused func(server, tool string) error

	ctx    context.Context
	cancel context.CancelFunc
	calls  sync.WaitGroup
	runner sync.WaitGroup

	mu             sync.Mutex
	closed         bool
	running        bool
	queue          []queued
	queuedProgress int // progress callbacks in queue
	// The callback running now: its context's cancel, and the call it
	// reports on (set by call.deliver; nil when none).
	runCancel context.CancelFunc
	runOwner  *call
}

// CallbackGrace is how long a session waits for a callback (Progress,
// Content, Error) to return once the callback's context ended, before it
// stops waiting and leaves the callback running: a call whose context
// ended returns at most this long after, and Session.Close (which waits
// for the session's calls, then for its callbacks) at most twice this long.
const CallbackGrace = time.Second

// NewSession returns a session whose calls name their server explicitly.
func (m *Manager) NewSession(cb Callbacks) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	return &Session{m: m, cb: cb, ctx: ctx, cancel: cancel}
}

// CallTool calls one tool. A tool that reports failure (MCP isError) is a
// result with IsError set and a nil error: the model should read it. Calls
// that fail otherwise return a *CallError, whose Kind says how the call
// ended (KindTimeout, KindCancelled, ...), with a result that has IsError
// set. The result's Tool is the server's name for the tool. Cancelling ctx
// stops the call promptly and tells the server; a call whose result came
// but whose context ends while the session's callbacks before it are still
// being delivered returns then, dropping the call's own progress, content
// and error callbacks still queued rather than waiting for them: it returns
// the result that came (the tool ran; do not assume it did not) with a
// *CallError of KindCancelled or KindTimeout that wraps ErrCallbacksDropped
// and the context's error.
func (s *Session) CallTool(ctx context.Context, call ToolCall) (*toolresult.Result, error) {
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.calls.Add(1)
	}
	s.mu.Unlock()
	if closed {
		return &toolresult.Result{Server: call.Server, Tool: call.Name, IsError: true, Error: ErrSessionClosed.Error()},
			&CallError{Server: call.Server, Tool: call.Name, Kind: KindConnection, Err: ErrSessionClosed}
	}
	defer s.calls.Done()
	server, tool := call.Server, call.Name
	if server == "" {
		if s.resolve == nil {
			err := errors.New("ToolCall.Server is empty; name the server or open the session with Registry.NewSession")
			return &toolresult.Result{Tool: tool, IsError: true, Error: err.Error()}, &CallError{Tool: tool, Kind: KindValidation, Err: err}
		}
		var err error
		if server, tool, err = s.resolve(ctx, call.Name); err != nil {
			ce := &CallError{Tool: call.Name, Kind: KindValidation, Err: err}
			s.reportError(ce)
			s.settle()
			return &toolresult.Result{Tool: call.Name, IsError: true, Error: err.Error()}, ce
		}
	} else if s.refused != nil {
		if err := s.refused(server, tool); err != nil {
			ce := &CallError{Server: server, Tool: tool, Kind: KindValidation, Err: err}
			s.reportError(ce)
			s.settle()
			return &toolresult.Result{Server: server, Tool: tool, IsError: true, Error: err.Error()}, ce
		}
	}
	var args any = call.Arguments
	if call.Arguments == nil {
		args = map[string]any{}
	}
	return s.m.callTool(ctx, s, call.Name, server, tool, args)
}

// CallToolsParallel runs calls concurrently (each within its server's
// concurrency limit). One failure does not cancel the others; results[i] and
// errs[i] belong to calls[i].
func (s *Session) CallToolsParallel(ctx context.Context, calls []ToolCall) (results []*toolresult.Result, errs []error) {
	results = make([]*toolresult.Result, len(calls))
	errs = make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { results[i], errs[i] = s.CallTool(ctx, c) })
	}
	wg.Wait()
	return results, errs
}

// Close cancels the session's calls still running and waits for them and
// for pending callbacks. It ends the context of the callback running, and
// waits for it at most [CallbackGrace] more (twice that in all when a
// call's callback is stuck too: the call waits first): a callback that
// ignores its context is left running (logged at warn level), and the
// callbacks queued behind it run once it returns. It is safe to call more than once; do not
// call it from inside a callback.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.calls.Wait()
	idle := make(chan struct{})
	go func() {
		s.runner.Wait()
		close(idle)
	}()
	s.waitGrace(idle, "session closing")
	return nil
}

func (s *Session) hasProgress() bool { return s.cb.Progress != nil }

// queued is one callback waiting on the session's callback goroutine; f
// gets the callback's context.
type queued struct {
	f        func(ctx context.Context)
	progress bool
}

// enqueue runs f on the session's callback goroutine, starting it if idle.
// It never blocks on a callback.
func (s *Session) enqueue(f func(ctx context.Context)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.push(queued{f: f})
}

// push queues e and starts the callback goroutine if idle; s.mu is held.
func (s *Session) push(e queued) {
	s.queue = append(s.queue, e)
	if e.progress {
		s.queuedProgress++
	}
	if !s.running {
		s.running = true
		s.runner.Add(1)
		go s.run()
	}
}

func (s *Session) run() {
	defer s.runner.Done()
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.queue = nil
			s.running = false
			s.mu.Unlock()
			return
		}
		e := s.queue[0]
		s.queue[0] = queued{}
		s.queue = s.queue[1:]
		if e.progress {
			s.queuedProgress--
		}
		ctx, cancel := context.WithCancel(s.ctx)
		s.runCancel, s.runOwner = cancel, nil
		s.mu.Unlock()
		e.f(ctx)
		s.mu.Lock()
		s.runCancel, s.runOwner = nil, nil
		s.mu.Unlock()
		cancel()
	}
}

// own records, on the callback goroutine, that the callback about to run
// reports on cl, unless cl was abandoned; it reports whether it is still
// to be delivered.
func (s *Session) own(cl *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cl.abandoned {
		return false
	}
	s.runOwner = cl
	return true
}

// abandon marks cl abandoned, so that its callbacks still queued are not
// delivered, and ends the context of its callback running, if any.
func (s *Session) abandon(cl *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cl.abandoned = true
	if s.runOwner == cl && s.runCancel != nil {
		s.runCancel()
	}
}

// flushed returns a channel closed once every callback queued so far has
// run, nil when none is queued or running.
func (s *Session) flushed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running && len(s.queue) == 0 {
		return nil
	}
	done := make(chan struct{})
	s.push(queued{f: func(context.Context) { close(done) }})
	return done
}

// flushCtx waits until every callback queued so far has run, or ctx ends.
func (s *Session) flushCtx(ctx context.Context) {
	if done := s.flushed(); done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
}

// settle waits until every callback queued so far has run, at most
// CallbackGrace: it is called once the contexts of the callbacks it waits
// for ended.
func (s *Session) settle() {
	if done := s.flushed(); done != nil {
		s.waitGrace(done, "call returning")
	}
}

// waitGrace waits for done at most the manager's callback grace, and logs
// the callback left running when it gives up.
func (s *Session) waitGrace(done <-chan struct{}, why string) {
	grace := cmp.Or(s.m.callbackGrace, CallbackGrace)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	s.mu.Lock()
	owner := s.runOwner
	s.mu.Unlock()
	if s.m.log == nil {
		return
	}
	fields := []zap.Field{zap.String("while", why), zap.Duration("grace", grace)}
	if owner != nil {
		fields = append(fields, zap.String("server", owner.server), zap.String("tool", owner.tool))
	}
	s.m.log.Warn("mcp session callback did not return after its context ended; left running, callbacks queued behind it run after it", fields...)
}

// progressOutcome says what became of a progress notification.
type progressOutcome int

const (
	progressQueued  progressOutcome = iota // queued for the Progress callback
	progressLate                           // its call had returned
	progressDropped                        // MaxQueuedProgress were waiting already
	progressClosed                         // the session is closed
)

// reportProgress queues p for the Progress callback of the session, unless
// the session is closed or MaxQueuedProgress notifications wait already.
// deliver runs on the callback goroutine and reports whether p is still to
// be delivered (its call may have given up meanwhile).
func (s *Session) reportProgress(p Progress, deliver func() bool) progressOutcome {
	if s.cb.Progress == nil {
		return progressQueued
	}
	max := s.m.cfg.MaxQueuedProgress
	if max <= 0 {
		max = DefaultMaxQueuedProgress
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return progressClosed
	}
	if s.queuedProgress >= max {
		return progressDropped
	}
	s.push(queued{progress: true, f: func(ctx context.Context) {
		if deliver() {
			s.cb.Progress(ctx, p)
		}
	}})
	return progressQueued
}

func (s *Session) reportError(e *CallError) {
	if s.cb.Error == nil {
		return
	}
	s.enqueue(func(ctx context.Context) { s.cb.Error(ctx, e) })
}

// reportErrorIf queues the Error callback of e; deliver reports, on the
// callback goroutine, whether it is still to be delivered.
func (s *Session) reportErrorIf(e *CallError, deliver func() bool) {
	if s.cb.Error == nil {
		return
	}
	s.enqueue(func(ctx context.Context) {
		if deliver() {
			s.cb.Error(ctx, e)
		}
	})
}

// reportContents queues the Content callback of each item of r; deliver
// reports, on the callback goroutine, whether they are still to be
// delivered.
func (s *Session) reportContents(name string, r *toolresult.Result, deliver func() bool) {
	if s.cb.Content == nil {
		return
	}
	for i, item := range r.Contents {
		ev := ContentEvent{Server: r.Server, Tool: r.Tool, Call: name, Index: i, Item: item}
		s.enqueue(func(ctx context.Context) {
			if deliver() {
				s.cb.Content(ctx, ev)
			}
		})
	}
}
