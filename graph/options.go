package graph

import (
	"context"
	"errors"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/internal/inplace"
	"math/rand/v2"
	"time"

	"go.uber.org/zap"
)

// DefaultStepLimit is the step limit of a graph that sets none: far above
// what a real agent loop needs, low enough to stop a runaway one.
const DefaultStepLimit = 100

// CompileOption configures a graph at [New] or [Graph.Compile]. Options
// that only make sense there, such as [WithCheckpointer], are
// CompileOptions only, so passing one to a run does not compile.
type CompileOption interface {
	applyCompile(*settings)
}

// RunOption configures one run, at [Compiled.Invoke], [Compiled.Stream],
// [Thread.Invoke] or [Thread.Stream]. Options that only make sense there,
// such as [Resume], are RunOptions only, so passing one to Compile does
// not compile.
type RunOption interface {
	applyRun(*settings)
}

// Option is valid in both places: given to Compile (or New) it sets the
// graph's default, given to a run it overrides that default for the run
// (hooks add up). [WithStepLimit], [WithMaxConcurrency], [WithHooks],
// [WithLogger], [WithModes], [WithDurability], [InterruptBefore] and
// [InterruptAfter] are Options.
type Option interface {
	CompileOption
	RunOption
}

// option is an Option; compileOption and runOption are options valid in
// one place only.
type (
	option        func(*settings)
	compileOption func(*settings)
	runOption     func(*settings)
)

func (o option) applyCompile(s *settings)        { o(s) }
func (o option) applyRun(s *settings)            { o(s) }
func (o compileOption) applyCompile(s *settings) { o(s) }
func (o runOption) applyRun(s *settings)         { o(s) }

type settings struct {
	name        string
	stepLimit   int
	concurrency int
	hooks       []Hooks
	logger      *zap.Logger
	modes       modeSet

	// durable runs
	saver       checkpoint.Saver
	ser         checkpoint.Serializer
	durability  Durability
	before      []string
	after       []string
	durableOpts bool // a run option that needs a checkpointer was given
	hasResume   bool
	resumeValue any
	resumeByID  map[string]any
	fromID      string
	labels      map[string]string // WithCheckpointMetadata
	// ContinueFrom: the checkpoint the run starts from instead of reading
	// the thread's latest (continued is set even for a snapshot that was
	// not read by Thread.State, so that the run refuses it).
	continued bool
	contRead  *checkpoint.Snapshot
	contFrom  any // the *durable[S] that read contRead
}

// WithName names the graph for tracing and logs: [Hooks] see it in
// [RunInfo].Graph. Unnamed graphs have the name "".
func WithName(name string) CompileOption {
	return compileOption(func(s *settings) { s.name = name })
}

// WithStepLimit sets how many super-steps a run may take before it fails
// with a [*StepLimitError]. Zero or less means [DefaultStepLimit].
func WithStepLimit(n int) Option { return option(func(s *settings) { s.stepLimit = n }) }

// WithMaxConcurrency bounds how many tasks of one super-step run at the same
// time. Zero or less means no bound: every task of a step runs at once.
func WithMaxConcurrency(n int) Option { return option(func(s *settings) { s.concurrency = n }) }

// WithHooks adds observability hooks. Several sets of hooks all run, in the
// order they were given.
//
// Hooks with every field nil are ignored, so a program can pass a tracer's
// hooks unconditionally: with tracing off they cost nothing.
func WithHooks(h Hooks) Option {
	return option(func(s *settings) {
		if h.empty() {
			return
		}
		s.hooks = append(s.hooks, h)
	})
}

// WithLogger sets the logger the engine reports retries (debug level) and
// recovered panics (warn level) to. The default, and nil, discard
// everything.
func WithLogger(l *zap.Logger) Option {
	if l == nil {
		l = zap.NewNop()
	}
	return option(func(s *settings) { s.logger = l })
}

// WithModes selects what [Compiled.Stream] yields. Without it a stream
// yields values, updates and custom events. Invoke ignores it.
func WithModes(modes ...StreamMode) Option {
	var set modeSet
	for _, m := range modes {
		set |= 1 << m
	}
	return modesOption(set)
}

// modesOption is the Option of WithModes: a byte, which an interface holds
// without allocating, where a function literal would allocate per run.
type modesOption modeSet

func (o modesOption) applyCompile(s *settings) { s.modes = modeSet(o) }
func (o modesOption) applyRun(s *settings)     { s.modes = modeSet(o) }

// WithCheckpointer makes the graph durable: given to [Graph.Compile] (or
// [New]), it saves a checkpoint of each run's thread after every
// super-step in saver, and enables threads ([Compiled.Thread]: runs,
// State, History, Update), [Interrupt], breakpoints and resuming. Runs of
// such a graph run on a thread.
// Compile checks that every exported field of the state (and every task
// node's input type) can be serialised.
func WithCheckpointer(saver checkpoint.Saver) CompileOption {
	return compileOption(func(s *settings) { s.saver = saver })
}

// Durability says when a run of a graph compiled with [WithCheckpointer]
// saves its thread's checkpoints. The zero value is [DurabilityStep].
//
// The three modes side by side, for a run of many steps:
//
//	mode             saves                          the run waits for    a crash (kill -9) loses
//	DurabilityStep   after every step, before the   every save           at most the step it was in
//	                 next one starts
//	DurabilityAsync  after every step, while the    a pause, the end     the steps whose saves had
//	                 next one runs (in order)       and a failure        not completed (at most
//	                                                                     the last few), never more
//	DurabilityExit   when the run ends, pauses,     its one save         the whole run since its
//	                 fails or is cancelled                               last save
//
// In every mode a crash leaves the thread resumable from its latest saved
// checkpoint, and a run that returns (finished, paused, failed or
// cancelled) has saved everything it is going to save, except, in
// DurabilityAsync, the saves a cancelled run's error names as possibly
// missing.
type Durability int

const (
	// DurabilityStep saves a checkpoint after every super-step (and the
	// writes of each finished task of a parallel step as it finishes),
	// before the next step starts: a run that crashes loses at most the
	// step it was in. This is the default.
	DurabilityStep Durability = iota
	// DurabilityExit saves a checkpoint only when the run leaves the
	// engine: when it ends, when it pauses ([Interrupt] or a breakpoint),
	// and when it fails or its context is cancelled. A failed or cancelled
	// run saves the state as of its last completed super-step, with the
	// failed step's tasks as the next ones (and, for a parallel step, the
	// writes of the tasks that finished), so it can be inspected with
	// [Thread.State] and resumed like a run saved step by step; that
	// save is made with a context that is no longer cancelled. It saves
	// one Put per run instead of one per step, which matters for short
	// runs of many steps on a store such as SQLite or PostgreSQL. The
	// trade-off: a process that crashes (or is killed) mid-run saves
	// nothing of that run, so the thread resumes from its last save — for
	// a run that did not pause, the end of the thread's previous run —
	// and the run's steps run again. The thread's history then has one
	// checkpoint per run rather than one per step.
	DurabilityExit
	// DurabilityAsync saves the same checkpoints as DurabilityStep, but a
	// step's checkpoint (and a parallel task's writes) is written on a
	// goroutine of the run while the next step runs, instead of before
	// it: LangGraph's "async" mode. Saves are made one at a time, in the
	// order of the steps, each deriving from the one before, so the
	// thread on disk is always a prefix of the run: a crash loses the
	// steps whose saves had not completed (the run waits when 8 are
	// queued) and never leaves the thread unresumable. A pause, a failure
	// and the end of the run wait for every save, so when Invoke returns
	// (or a Stream ends) the thread is saved as with DurabilityStep. None
	// of these waits outlasts the run's context: once it is cancelled the
	// run returns at once (a Saver that hangs, such as one on a stuck
	// database connection, cannot hold it), the saves still queued or
	// under way are cancelled, and the run's error, which wraps the
	// context's, names each of them as possibly missing; the thread goes
	// on from the last checkpoint saved before them. A failed save fails
	// the run at its next step boundary (or when it returns), and nothing
	// after it is saved.
	DurabilityAsync
)

// String names the mode ("step", "exit" or "async").
func (d Durability) String() string {
	switch d {
	case DurabilityStep:
		return "step"
	case DurabilityExit:
		return "exit"
	case DurabilityAsync:
		return "async"
	}
	return "Durability(" + itoa(int(d)) + ")"
}

func (d Durability) valid() bool {
	return d == DurabilityStep || d == DurabilityExit || d == DurabilityAsync
}

// WithDurability sets when a durable graph saves checkpoints: after every
// super-step ([DurabilityStep], the default), after every super-step while
// the next one runs ([DurabilityAsync]) or when the run ends, pauses or
// fails ([DurabilityExit]). Given to [Graph.Compile] it applies to every
// run; given to a run it applies to that run (a subgraph with a
// checkpointer of its own saves as its own Compile options say). A graph
// without a checkpointer ignores it.
func WithDurability(d Durability) Option {
	return option(func(s *settings) { s.durability = d })
}

// WithSerializer sets how a durable graph encodes state fields, pending
// writes, task inputs, interrupt payloads and resume values. The default,
// and nil, is [checkpoint.JSON].
func WithSerializer(ser checkpoint.Serializer) CompileOption {
	return compileOption(func(s *settings) { s.ser = ser })
}

// InterruptBefore sets static breakpoints: the run pauses before a step
// that would run one of the named nodes ("*" for every node), with an
// [*InterruptError] whose interrupts are of kind [BreakpointBefore]. Running
// the thread again with a zero input runs the step. At
// Compile it applies to every run; given to a run it replaces the graph's.
//
// Only a run that continues the very pause goes past it, and only for
// the tasks that had gone past it: one on the checkpoint that paused
// there (or a copy of it by [Thread.Update] without [AsNode], which keeps
// its next tasks and interrupts), for the tasks it paused before, or one
// resuming a step paused inside by [Interrupt], for the tasks that
// called Interrupt and those that finished. Every other step with a task
// of a named node pauses first, the first step of a run included: one
// that Thread.Update with AsNode routed to, one of a checkpoint saved
// between steps that [FromCheckpoint] runs again, one a failed or
// cancelled run left, one after a pause at a breakpoint after a node
// ([InterruptAfter]), and a paused step in which Thread.Update without
// AsNode added a task by its routing or dropped a finished task's
// writes. Such a pause keeps the resume values the run was given and the
// writes of the tasks that finished: the run that approves it uses them.
func InterruptBefore(nodes ...string) Option {
	return option(func(s *settings) { s.before = nodes; s.durableOpts = true })
}

// InterruptAfter sets static breakpoints after the named nodes ("*" for
// every node): the run pauses after the step in which one ran, once its
// checkpoint is saved. Running the thread again with a zero input goes on.
// After the graph's last step there is nothing to pause: the run ends.
func InterruptAfter(nodes ...string) Option {
	return option(func(s *settings) { s.after = nodes; s.durableOpts = true })
}

// Resume resumes a thread paused on one [Interrupt]: the paused node runs
// again and its Interrupt call returns v. A thread paused on several
// interrupts needs [ResumeByID]. On the thread's latest checkpoint, v is
// saved as a pending write of the paused checkpoint before the node runs
// (see "Interrupts" in the package doc): if the run stops in the node, a
// run with a zero input gives the node v; Resume again replaces it.
func Resume(v any) RunOption {
	return runOption(func(s *settings) { s.hasResume, s.resumeValue, s.durableOpts = true, v, true })
}

// ResumeByID resumes the interrupts named by id (see [InterruptInfo.ID]) with
// their values. Interrupts not named stay pending: their nodes run again
// and pause again, and can be resumed by a later run. The values are
// saved before the step runs, as [Resume]'s are; a value given again for
// an id replaces the saved one.
func ResumeByID(values map[string]any) RunOption {
	return runOption(func(s *settings) {
		s.hasResume, s.durableOpts = true, true
		if s.resumeByID == nil {
			s.resumeByID = map[string]any{}
		}
		for k, v := range values {
			s.resumeByID[k] = v
		}
	})
}

// FromCheckpoint runs the thread from checkpoint id, an earlier checkpoint
// of it (time travel): the steps after it run again, and their checkpoints
// start a new branch of the thread, leaving the old history as it was.
// With a zero input the run goes on from the checkpoint as it would from
// the thread's latest: its pending step runs (with [Resume] or
// [ResumeByID] for one paused on [Interrupt]). New input merges into the checkpoint's state and the run starts from START,
// as on a finished thread; a step the checkpoint has pending (paused or
// stopped) is dropped, with the interrupts it raised: their IDs are in
// the new checkpoint's metadata under [MetaDroppedInterrupts]. That makes FromCheckpoint with the thread's
// latest checkpoint the way to give a paused thread new input.
func FromCheckpoint(id string) RunOption {
	return runOption(func(s *settings) { s.fromID, s.durableOpts = id, true })
}

// WithCheckpointMetadata adds labels to the metadata of every checkpoint
// the run saves on its thread (beside [MetaSource], which a label of that
// name does not replace), so that the thread's history says which run
// saved each checkpoint and with what metadata (LangGraph's servers put a
// run's id and metadata there). The run keeps labels: the caller must not
// modify the map afterwards. Checkpoints of a subgraph's own thread, and
// those of Thread.Update, do not get them. A run without a checkpointer
// ignores them.
func WithCheckpointMetadata(labels map[string]string) RunOption {
	return runOption(func(s *settings) { s.labels = labels })
}

// ContinueFrom runs the thread on from snap, its latest state as
// [Thread.State] of the same compiled graph returned it, without reading
// the thread's latest checkpoint again: a caller that has just read the
// state (to show it, or to check that the thread is not paused) saves the
// run one read of its checkpointer. The run goes on exactly as it would
// without the option: new input merges into snap's state, a zero input or
// [Resume] goes on with snap's paused step.
//
// The run's first checkpoint expects snap's checkpoint to be the
// thread's latest: if another writer saved a checkpoint of the thread
// since snap was read, that save fails with an error wrapping
// [checkpoint.ErrConflict] and the thread keeps the other writer's
// checkpoint (no branch is made, no write is lost). Nodes that ran before
// that save (a resumed step's, or every step's with [DurabilityExit]) ran
// on the old state, as in any run that loses such a race; pending writes
// saved against snap's checkpoint after it was read are not seen, so
// their tasks run again. Read the state again to run on the newer one.
//
// The run refuses, with an error wrapping [ErrBadSnapshot] and before
// any node runs, a snap that Thread.State did not return (a zero
// StateSnapshot, or one from [Thread.StateAt] or [Thread.History], which
// are not known to be the latest: run those with [FromCheckpoint] and
// snap.CheckpointID), one read by another compiled graph, one of another
// thread, and a run given [FromCheckpoint] too (FromCheckpoint runs from
// a checkpoint it reads; give one of the two).
func ContinueFrom[S any](snap StateSnapshot[S]) RunOption {
	var from any
	if snap.from != nil {
		from = snap.from
	}
	return runOption(func(s *settings) {
		s.continued, s.contRead, s.contFrom, s.durableOpts = true, snap.read, from, true
	})
}

func (s *settings) compileOpts(opts []CompileOption) {
	for _, o := range opts {
		if o != nil {
			o.applyCompile(s)
		}
	}
}

func (s *settings) runOpts(opts []RunOption) {
	for _, o := range opts {
		if o != nil {
			o.applyRun(s)
		}
	}
}

// Hooks are callbacks on a run's execution, for tracing, metrics and event
// publishing: the run as a whole, each super-step, each node attempt and
// each checkpoint save. Every field may be nil. Node hooks are called from
// the goroutine that runs the node, so hooks of parallel nodes run
// concurrently.
//
// The Start hooks return the context what they wrap goes on with, so a
// tracer can nest spans: node attempts run under their step's context,
// steps under their run's, and a subgraph's run under its node's. A
// subgraph compiled without hooks of its own calls the hooks of the run it
// is nested in, so hooks given to the outermost graph see every run; one
// compiled with hooks calls only those.
type Hooks struct {
	// RunStart is called when a run starts, before anything is loaded or
	// saved: a run of Invoke or Stream (on a thread or not), a resumed
	// run, and a subgraph's run inside its node. It returns the context
	// the run goes on with; return ctx when there is nothing to add.
	RunStart func(ctx context.Context, r RunInfo) context.Context
	// RunEnd is called once when the run started by RunStart ends:
	// finished, paused, failed or stopped. It gets the context RunStart
	// returned.
	RunEnd func(ctx context.Context, r RunInfo, res RunResult)
	// StepStart is called before each super-step (before its breakpoints
	// and tasks). It returns the context the step's tasks run with.
	StepStart func(ctx context.Context, s StepInfo) context.Context
	// StepEnd is called after each super-step that StepStart saw, with
	// the context StepStart returned and the step's error: nil when the
	// step completed (its updates merged, its routes followed and, for a
	// durable run saving step by step, its checkpoint saved).
	StepEnd func(ctx context.Context, s StepInfo, err error)
	// NodeStart is called before each attempt of a node. It returns the
	// context the node runs with, so a tracer can start a span there;
	// return ctx when there is nothing to add.
	NodeStart func(ctx context.Context, t TaskInfo) context.Context
	// NodeEnd is called after each successful attempt.
	NodeEnd func(ctx context.Context, t TaskInfo, elapsed time.Duration)
	// NodeError is called after each failed attempt, retried or not.
	NodeError func(ctx context.Context, t TaskInfo, elapsed time.Duration, err error)
	// Saved is called after each save of a durable run (a checkpoint, or
	// the writes of a task that finished in a parallel step), successful
	// or not, with how long the Saver took. In [DurabilityAsync] it is
	// called from the goroutine of the run that saves.
	Saved func(ctx context.Context, s SaveInfo, elapsed time.Duration, err error)
}

// empty reports whether h has no callback.
func (h *Hooks) empty() bool {
	return h.RunStart == nil && h.RunEnd == nil && h.StepStart == nil && h.StepEnd == nil &&
		h.NodeStart == nil && h.NodeEnd == nil && h.NodeError == nil && h.Saved == nil
}

// hasNodeHook reports whether a set of hooks has NodeStart, NodeEnd or
// NodeError: a run without them calls its nodes without timing them.
func hasNodeHook(hooks []Hooks) bool {
	for i := range hooks {
		if h := &hooks[i]; h.NodeStart != nil || h.NodeEnd != nil || h.NodeError != nil {
			return true
		}
	}
	return false
}

// RunInfo describes a run to [Hooks.RunStart] and [Hooks.RunEnd]. The
// run's id, when the caller set one, is in [ConfigFrom]'s RunConfig.
type RunInfo struct {
	Graph     string   // the graph's name (see [WithName]); "" when unnamed
	Namespace []string // the subgraph nodes enclosing this run, outermost first
	// Thread is the thread a durable run runs on; "" for a run without a
	// checkpointer.
	Thread string
	// Resume reports a run given [Resume] or [ResumeByID]: it resumes a
	// paused step.
	Resume bool
	// FromCheckpoint is the checkpoint a run given [FromCheckpoint] starts
	// from.
	FromCheckpoint string
}

// RunResult is how a run ended, for [Hooks.RunEnd].
type RunResult struct {
	Steps   int           // super-steps this run started
	Elapsed time.Duration // from RunStart to RunEnd
	// Err is what the run returned: nil when it finished, an
	// [*InterruptError] when it paused, otherwise why it failed or stopped.
	Err error
}

// StepInfo describes a super-step to [Hooks.StepStart] and [Hooks.StepEnd].
type StepInfo struct {
	Namespace []string // the subgraph nodes enclosing this run, outermost first
	Step      int      // the super-step, counted from 1 over the thread's life
	Nodes     []string // the node of each task of the step, in task order
}

// SaveInfo describes one save of a durable run, for [Hooks.Saved].
type SaveInfo struct {
	Namespace []string // the subgraph nodes enclosing this run, outermost first
	Thread    string   // the thread saved
	// Checkpoint is the id of the checkpoint saved or, for Writes, the
	// checkpoint the writes are recorded against.
	Checkpoint string
	// Step is the checkpoint's step or, for Writes, the step whose task
	// made them.
	Step   int
	Writes bool // a task's pending writes (PutWrites), not a checkpoint (Put)
	Bytes  int  // the encoded bytes saved: channel blobs and writes
	// Backend is the Saver's type, such as "checkpoint.Memory" or
	// "postgres.Saver".
	Backend string
}

// TaskInfo identifies one execution of a node. Task ids are deterministic:
// the same run produces the same ids, which is what lets a resumed run match
// a task to its saved result.
type TaskInfo struct {
	Namespace []string // the subgraph nodes enclosing this graph, outermost first
	Step      int      // the super-step, counted from 1
	Node      string   // the node's name
	Index     int      // the task's index within its step (its merge order)
	Attempt   int      // 1 for the first attempt, then 2, 3, ... on retries
}

// ID returns the task's id: step, node and index, prefixed with the
// enclosing subgraph nodes.
func (t TaskInfo) ID() string {
	id := ""
	for _, n := range t.Namespace {
		id += n + "/"
	}
	return id + itoa(t.Step) + ":" + t.Node + ":" + itoa(t.Index)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// NodeOption configures one node at [Graph.AddNode], [AddTask] or
// [AddSubgraph].
type NodeOption func(*nodeOptions)

type nodeOptions struct {
	retry    *RetryPolicy
	timeout  time.Duration
	targets  []string
	deferred bool
	// into is the function that runs the node in place of the one it
	// was added with, writing its update in place (see
	// internal/inplace); AddNode and AddTask check its type, and
	// AddSubgraph refuses it.
	into any
}

func init() {
	inplace.Node = func(fn any) any { return NodeOption(func(o *nodeOptions) { o.into = fn }) }
	inplace.Route = func(u any) any { return u.(routed).routing() }
}

// routed is a *Update[S] of any S, as inplace.Route takes it.
type routed interface{ routing() *Route }

// routing returns the routing of u, to be changed in place (see
// inplace.Route).
func (u *Update[S]) routing() *Route { return &u.route }

// Retry makes a failed node run again according to p.
func Retry(p RetryPolicy) NodeOption {
	return func(o *nodeOptions) { o.retry = &p }
}

// Timeout bounds each attempt of the node: its context is cancelled after d
// and the attempt fails with a [*TimeoutError] (retried if the node has a
// retry policy that allows it).
func Timeout(d time.Duration) NodeOption {
	return func(o *nodeOptions) { o.timeout = d }
}

// Targets declares where the node may route from inside, with
// [Update.Goto] or [Update.Send]: LangGraph's destinations. The targets are
// validated at Compile, count for reachability and are drawn; a route to an
// undeclared target fails the run with [ErrBadRoute].
func Targets(names ...string) NodeOption {
	return func(o *nodeOptions) { o.targets = append(o.targets, names...) }
}

// Defer makes a node wait, once triggered, until no other task is ready to
// run: it runs in a step of its own, after every other branch has finished
// or stopped. It is the explicit join (LangGraph's defer=True) for where
// the automatic one cannot apply: a join inside a loop, such as an agent
// node waiting for parallel tool branches of different lengths, or a node
// fed by a loop that should run once, after the loop, rather than after
// each round.
func Defer() NodeOption {
	return func(o *nodeOptions) { o.deferred = true }
}

// RetryPolicy says when and how often a failed node runs again. Each retry
// waits InitialInterval × BackoffFactor^(n-1), at most MaxInterval, and
// stops early when the run's context is cancelled. The updates of a failed
// attempt are discarded.
type RetryPolicy struct {
	// MaxAttempts is the total number of attempts, the first included.
	// Zero means 3.
	MaxAttempts int
	// InitialInterval is the wait before the first retry. Zero means 500ms.
	InitialInterval time.Duration
	// BackoffFactor multiplies the wait after each retry. Zero means 2.
	BackoffFactor float64
	// MaxInterval caps the wait. Zero means 30s.
	MaxInterval time.Duration
	// Jitter, when true, waits a random duration between half and all of
	// the computed wait.
	Jitter bool
	// RetryOn reports whether an error is worth retrying. Nil retries every
	// error except panics and the cancellation of the run's context.
	RetryOn func(error) bool
}

func (p *RetryPolicy) attempts() int {
	if p == nil {
		return 1
	}
	if p.MaxAttempts <= 0 {
		return 3
	}
	return p.MaxAttempts
}

func (p *RetryPolicy) retryable(err error) bool {
	if p.RetryOn != nil {
		return p.RetryOn(err)
	}
	if errors.Is(err, ErrNodePanic) {
		return false
	}
	if errors.Is(err, ErrNodeTimeout) {
		return true
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// wait returns the wait before retry number n (1 for the first retry).
func (p *RetryPolicy) wait(n int) time.Duration {
	d := p.InitialInterval
	if d <= 0 {
		d = 500 * time.Millisecond
	}
	f := p.BackoffFactor
	if f <= 0 {
		f = 2
	}
	max := p.MaxInterval
	if max <= 0 {
		max = 30 * time.Second
	}
	w := float64(d)
	for i := 1; i < n && w < float64(max); i++ {
		w *= f
	}
	if w > float64(max) {
		w = float64(max)
	}
	if p.Jitter {
		w = w/2 + rand.Float64()*w/2
	}
	return time.Duration(w)
}

// RunConfig describes a run to the code it calls, for tracing and
// logging. Put it on the context with [WithConfig] before Invoke or Stream;
// nodes, routers and hooks read it with [ConfigFrom].
type RunConfig struct {
	RunID string // identifies this run, e.g. for tracing
	// ThreadID is the thread the run continues. A run on a [Thread] sets
	// it for its nodes and hooks. [Compiled.Invoke] and [Compiled.Stream]
	// of a durable graph run on the thread it names, for code that passes
	// runs through a context; elsewhere use [Compiled.Thread].
	ThreadID string
	Tags     []string       // free labels, e.g. for filtering traces
	Metadata map[string]any // free key-value data
}

type configKey struct{}

// WithConfig returns a context carrying cfg.
func WithConfig(ctx context.Context, cfg RunConfig) context.Context {
	return context.WithValue(ctx, configKey{}, &cfg)
}

// ConfigFrom returns the run configuration carried by ctx, or the zero
// RunConfig.
func ConfigFrom(ctx context.Context) RunConfig {
	if c, ok := ctx.Value(configKey{}).(*RunConfig); ok {
		return *c
	}
	return RunConfig{}
}
