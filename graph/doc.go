// Package graph is agentgraph's engine: typed state graphs whose nodes read
// a shared state struct and return updates that merge into it field by
// field, run in parallel super-steps, route conditionally, fan out into
// dynamic tasks, nest as subgraphs and stream what they do.
//
// # State, field handles and updates
//
// A graph runs over one state type S, a plain Go struct of the user's:
//
//	type State struct {
//		Messages []string
//		Usage    TokenUsage
//		Next     string
//	}
//
// Each field that nodes write gets a typed handle, usually a package
// variable next to the struct. The handle's constructor names the field's
// reducer, the rule that merges a write into the current value:
//
//	var (
//		Messages = graph.Append(func(s *State) *[]string { return &s.Messages })
//		Usage    = graph.Declare(func(s *State) *TokenUsage { return &s.Usage }) // TokenUsage has Merge
//		Next     = graph.Replace(func(s *State) *string { return &s.Next })
//	)
//
// The reducers are [Replace] (the write wins; the default), [Append]
// (slices), [MergeMap] (maps, key by key, copy on write), [Sum] (numbers),
// [Merge] (the type's own Merge(T) T method, see [Merger]), [Reduce] (any
// func(old, new T) T) and [Declare], which picks Merge for a type that
// implements [Merger] and Replace otherwise, so a token-usage field
// accumulates by itself. The accessor is called once, when the handle is
// made, to find the field's offset, type and name by reflection; after that
// the handle moves values with typed functions and no reflection at all.
// The compiler checks that a handle's value type matches its field.
//
// A node is a function of the state value:
//
//	func answer(ctx context.Context, s State) (graph.Update[State], error) {
//		reply, usage := callModel(ctx, s.Messages)
//		return graph.Updates(Messages.Set([]string{reply}), Usage.Set(usage)), nil
//	}
//
// It returns an [Update] naming only the fields it writes. A field it does
// not write is untouched, however many other nodes write it at the same
// time, and a field it writes is written even with the zero value:
// Next.Set("") clears Next. An Update is a value holding a value of S with
// the written fields filled in and the handles they were written through,
// so building, returning and merging one allocates nothing (for updates of
// up to two fields; a wider one allocates its list of handles). A node
// writing many fields may build its update in one variable with
// [Field.Put] instead, which copies nothing. Nodes must treat the state
// they receive as read-only: its slices and maps are shared.
//
// A write merges through the reducer of the handle it was made with, so
// graphs over one state type may merge a field differently, each through
// its own handle. A state type may have any number of fields and handles;
// handles hold no memory once unused, and declaring a field's first handle
// again returns it. That first handle is the field's default: it merges a
// thread's input into the field and rebuilds the field's saved writes after
// a restart. A graph whose reducer for a field is another handle lists its
// own with [Graph.Handles]. A checkpointed graph saves a [Reduce] write
// under its function's name and a resume merges it with that function:
//
//	var (
//		Best  = graph.Reduce(func(s *State) *int { return &s.Best }, maxInt) // the default
//		Worst = graph.Reduce(func(s *State) *int { return &s.Best }, minInt)
//	)
//	g := graph.New[State]().Handles(Worst)
//
// # Super-steps
//
// A run proceeds in super-steps (LangGraph's and Pregel's model). In each
// step the engine
//
//  1. executes every task of the step: each node triggered by the previous
//     step and each dynamic task sent to this one. A lone task runs inline
//     on the caller's goroutine; several run in parallel (bounded by
//     [WithMaxConcurrency]), all reading the same state as of the end of
//     the previous step, none seeing another's writes;
//  2. merges the tasks' updates into the state through the reducers, in
//     task order, after all of them finished;
//  3. routes: for each node that ran, its static edges and its routers
//     (run once, on the merged state) and the routing in its tasks'
//     updates decide the next step's tasks.
//
// The run ends when a step produces no task. One step is one super-step
// whatever its width, which is the unit of the step limit
// ([WithStepLimit], default [DefaultStepLimit]): a run that needs more
// fails with a [*StepLimitError] saying how to raise it. Steps are counted
// from 1.
//
// # Merge order and conflicts
//
// Task order is deterministic: triggered nodes in the order they were added
// to the graph, then dynamic tasks in the order they were sent. Updates are
// applied in that order whatever the order the goroutines finished in, so
// the same input gives the same state on every run: a 100-way fan-out that
// appends to a list yields the list in declaration order, and 1000 Sends
// yield their results in send order. Two tasks of one step writing a
// Replace field is not resolved by order: the run fails with a
// [*ConflictError] naming both nodes and the field. A field parallel nodes
// write needs a merging reducer.
//
// # Edges, routing and joins
//
// [Graph.AddEdge] adds a static edge; [START] and [END] are the virtual
// entry and exit. [Graph.AddConditionalEdges] adds a router, a
// [RouterFunc] returning a [Route] built with [To] (one or more targets,
// END included) or [Dispatch] (dynamic tasks); its possible targets are
// declared when it is added, so Compile can check them and [Compiled.Mermaid]
// can draw them, and a router returning an undeclared target fails the run
// with [ErrBadRoute]. A node can also route from inside, LangGraph's
// Command, by returning an update with [Update.Goto] or [Update.Send]; its
// targets are declared with the [Targets] node option. Routing adds to the
// node's edges; it does not replace them.
//
// A node triggered several times in one step runs once. A node with
// incoming edges from branches of different lengths (a join) waits: while a
// node that can still reach it through an incoming edge that has not
// triggered it since it last ran, and that it cannot reach back, has a
// task, it keeps its trigger and runs in a later step, once, after all of
// them. With edges A→B→D and A→C1→C2→D, D triggered by B waits for C1 and
// C2 and runs once, after C2. A node fed by a loop does not wait for the
// loop: the loop's edge has already triggered it, so it runs in the step
// after each trigger, alongside the loop's next round, as in LangGraph.
// Inside a cycle that contains both the join and the branch no such order
// exists, and the join runs each time it is triggered, as in LangGraph.
// Give a node the [Defer] option to make it wait until nothing else is
// ready: a join inside a cycle, or a node that should run once after a
// loop that feeds it rather than once per round.
//
// # Dynamic tasks
//
// [AddTask] adds a task node whose function takes an input of its own type
// instead of the state; its handle's Send(x) makes a [Send]. Returning N
// Sends from a router (or a node) runs N tasks in the next step, in
// parallel, and merges their updates in send order: a typed map-reduce
// with no `any` in user code.
//
// # Subgraphs
//
// [AddSubgraph] adds a node that runs another compiled graph, with the same
// or a different state type: the caller maps the parent's state into the
// child's input and the child's final state into an update of the parent.
// The child runs under the node's context, so cancellation and deadlines
// reach it; in a streamed run its events are streamed too, with the node's
// name in [Event.Namespace]. Mermaid draws it nested. In a durable run the
// child is one task of the parent, checkpointed before and after it,
// unless the child has a checkpointer of its own (see Durable subgraphs
// below).
//
// # Failure
//
// A node's error fails the run with a [*NodeError] naming the node and the
// step and wrapping the node's error for errors.Is and errors.As. When one
// task of a parallel step fails, its siblings' context is cancelled and the
// step reports the first real failure in task order. Per node, [Retry]
// re-runs a failed node with exponential backoff (the failed attempt's
// update is discarded) and [Timeout] bounds each attempt ([*TimeoutError]).
// A panic in a node or router becomes a [*PanicError] with its stack; the
// process does not crash. Cancelling the run's context stops the run at the
// next boundary after the running nodes return; Invoke then returns the
// state as of the last completed step with the context's error.
//
// # Streaming, hooks and run configuration
//
// [Compiled.Stream] returns an iter.Seq2 of [Event] values in the modes
// chosen with [WithModes]: values (the state after each step), updates
// (each task's update, as soon as the task finishes), custom (payloads
// nodes write with [Emit], such as progress), messages (the chunks of
// model replies of nodes that call their model through [Generate]; see
// [StreamMessages]) and debug (each task attempt's start and end with
// durations). The run goes on the loop's goroutine, and the loop body
// handles each event while the run waits for it (the tasks of a parallel
// step still run concurrently). Breaking out of the loop cancels the run
// and waits for its nodes, so no node outlives the loop. [Hooks] passed with
// [WithHooks] see each node attempt's start, end and error with timings and
// may put a tracing span in the node's context. A [RunConfig] (run id,
// thread id, tags, metadata) travels in the context ([WithConfig],
// [ConfigFrom]).
//
// # Durable runs
//
// [WithCheckpointer] at Compile attaches a [checkpoint.Saver] (in memory,
// SQLite or PostgreSQL; see package checkpoint). Compile then checks that
// every exported field of the state, and every task node's input type,
// can be serialised ([WithSerializer]; JSON by default), and names the
// field that cannot. Decoding only ever fills the graph's own state type.
//
// Such a graph runs on threads, each a durable conversation or job named
// by an id. [Compiled.Thread] returns the handle on one, in the manner of
// a database/sql transaction: its methods run the graph and read or edit
// the thread's saved state.
//
//	th := app.Thread("conversation-42")
//	out, err := th.Invoke(ctx, State{Messages: []string{"hi"}})
//	var ie *graph.InterruptError
//	if errors.As(err, &ie) { // a node asked a human
//		out, err = th.Invoke(ctx, State{}, graph.Resume("yes"))
//	}
//	snap, err := th.State(ctx) // values, next nodes, interrupts
//	for s, err := range th.History(ctx, checkpoint.ListOptions{}) { ... }
//	id, err := th.Update(ctx, Next.Set("review"), graph.AsNode("plan"))
//
// Nodes and hooks see the thread's id in [ConfigFrom]. Code that receives
// its runs through a context (a layer running graphs for its caller) may
// instead call [Compiled.Invoke] or [Compiled.Stream] with
// RunConfig.ThreadID set in the context ([WithConfig]); the handle is the
// primary API.
//
// What a checkpoint holds. Each exported top-level field of the state is a
// channel with a version. A checkpoint records the thread, its parent
// checkpoint, the step number, the version of every channel, the nodes that
// ran, the tasks of the next step (with their inputs, for Sends), the
// interrupts it waits on, and metadata ([MetaSource]: input, loop,
// interrupt, update or fork). It stores a blob only for the fields written
// in its step (within a run, after the run's first checkpoint, a field
// written again with the value it held is not stored again; a run that
// starts from a loaded checkpoint, as a resume, a fork, [FromCheckpoint],
// [ContinueFrom] or [Thread.Update] does, stores its first write of each
// field even when unchanged, and whole unless it is an [Append]), and a
// slice field written through an [Append] handle is stored as a delta, the
// items appended, with a full value now and then (when the deltas outgrow
// the last full value). So is a slice field written otherwise (a merge
// method such as model.Messages', as [Declare] gives it, [Reduce] or
// [Replace]) when its earlier items are unchanged, with the default
// serializer (the JSON encoding of each item compared with the last
// checkpoint's, within a run); a write that edits or removes an item stores
// the whole value. A slice type that decodes itself (json.Unmarshaler or
// encoding.TextUnmarshaler) is always stored whole. A thread's storage
// grows with what changed, not with steps × state.
//
// When it is written. A run writes one checkpoint when it starts (the input
// merged, the first tasks scheduled) and one after every super-step, once
// the step's updates are merged and the next tasks routed. In a parallel
// step each task's update is also saved as soon as the task finishes, as a
// pending write, so a crash, a failing sibling or an interrupt does not
// lose it. A paused step is saved as one checkpoint together with the
// finished tasks' writes and the resume values used, in one atomic write.
// That is [DurabilityStep], the default: each save is made before the
// next step starts. The three durability modes, set with [WithDurability]
// at Compile or per run, differ in when the saves are made and so in what
// a crash of the process (kill -9) loses:
//
//	mode             when a step is saved              a crash loses
//	DurabilityStep   before the next step starts       at most the step it was in
//	DurabilityAsync  while the next step runs          the steps whose saves had not completed
//	DurabilityExit   once, when the run leaves         the run's progress since its last save
//
// With [DurabilityAsync] (LangGraph's default) a run saves the same
// checkpoints as with DurabilityStep, one at a time and in order, on a
// goroutine of its own, so a step's save overlaps the next step; a pause,
// a failure and the end of the run wait for every save, so what a caller
// sees returned is saved, and the thread on disk is always a prefix of the
// run,
// resumable from its latest checkpoint. When the Saver is a
// [checkpoint.Syncer] (the PostgreSQL one is), the run's saves do not wait
// for the storage to flush each one to disk; the run syncs once before it
// returns or pauses, so a crash of the database server mid-run also loses
// at most a suffix of the run's steps. A run whose context is cancelled
// still waits for its saves, for a bounded time, so that a Saver that
// hangs cannot keep it from returning: up to a second for the saves it
// queued (such as a finished task's writes), then up to a second for the
// save under way once it is cancelled, and, with a checkpoint.Syncer, up
// to five seconds for the Sync that makes them durable, seven seconds in
// all at most. A save that does not complete in that time may be missing,
// and the run's error names it; a run whose saves all complete loses
// nothing, and if it had finished its steps it returns its result with no
// error (as it would have a moment earlier), so that a caller does not
// run a finished thread again. With [DurabilityExit] a run
// saves only when it leaves the engine: once at its end, at a pause, and
// when it fails or is cancelled, the failure save holding what step
// durability would have left (the last completed step, the failed step as
// next, and a parallel step's finished writes), so the thread can be
// inspected and resumed the same way (a cancelled run's save gets up to a
// second once its context is done). One Put per run instead of one per
// step suits short runs, such as chat turns, on SQLite or PostgreSQL; the
// price is that a process crash mid-run loses the run's progress since its
// last save, and the thread's history has a checkpoint per run, not per
// step.
//
// Resume semantics. The first run of a thread merges its input into the
// zero state through the reducers. A run on a thread continues from the
// thread's latest checkpoint. If the thread finished, the new input merges into the saved
// state through the reducers (a conversation's next message is appended;
// a zero field is left alone) and the run starts again from START. If the
// last run stopped inside a step (killed, failed, paused), running the
// thread with a zero input, or with [Resume] or [ResumeByID], re-runs that
// step: tasks whose writes were saved are not run again, their saved
// updates are merged; the others run. New non-zero input on such a thread
// fails with [ErrThreadPaused] (which also matches checkpoint.ErrConflict
// when the step is not paused: another run may be in it), unless given
// with [FromCheckpoint], which drops the pending step. Two runs writing one thread at once never
// fork it silently: the second to save gets a *checkpoint.ConflictError
// (errors.Is(err, checkpoint.ErrConflict)) and saved nothing.
//
// Interrupts. [Interrupt] inside a node pauses the run for a human: Invoke
// returns an [*InterruptError] (errors.Is(err, [ErrInterrupted])) with
// each interrupt's id and payload, Stream ends with a [StreamInterrupt]
// event, and [Thread.State] lists them. Resuming runs the node again
// from its beginning, and this time Interrupt returns the resume value:
// code before Interrupt runs twice, so keep it free of side effects (as in
// LangGraph). A run that continues the pause of the thread's latest
// checkpoint saves its resume values as pending writes of that checkpoint
// before the step runs again (with [DurabilityExit], when the run leaves,
// if the step did not complete), as LangGraph does: if the run then stops
// in the resumed node (a crash, a cancellation, a failure), running the
// thread again with a zero input gives the node the saved value instead of
// pausing it again, and giving a value again replaces the saved one.
// [Thread.State] still lists the interrupt until its step completes (the
// saved value is not shown). A saved value belongs to that checkpoint only
// while it is the thread's latest: [Thread.Update] without [KeepWrites]
// drops it with the other pending writes (with KeepWrites the copy keeps
// it), and once the thread has moved on, runs and updates from the
// checkpoint ([FromCheckpoint], [UpdateFrom]) see it as it was saved, so
// a fork from it pauses on the interrupt again. A run from an earlier
// checkpoint saves no resume value on it. Interrupts of parallel branches of one step each have their
// own id ("step:node:task#n") and can be resumed in one run with
// [ResumeByID] or one by one; a branch that finished is not run again.
// Interrupt inside a subgraph (one compiled without a checkpointer) pauses
// the parent's subgraph node; on resume the whole subgraph runs again and
// its Interrupt returns the value.
//
// Durable subgraphs. A subgraph compiled with a checkpointer of its own,
// whose parent run is durable, checkpoints its run on a thread of its own
// in its saver, one per execution of the subgraph node, named by
// [SubgraphThread] after the parent's thread and task. A parent step that
// stops inside the subgraph (a crash, a cancellation, a pause) and runs
// again resumes the subgraph's thread where it stopped: its nodes that
// finished do not run again. Its interrupts pause the parent: each is
// raised in the parent's subgraph node, one at a time, with the
// subgraph's payload (the JSON serializer passes it through as it is),
// and each resume value reaches the interrupt it answers. Breakpoints set
// at the subgraph's Compile do not pause the parent. A subgraph node that
// runs again after its thread finished (the parent stopped before saving
// the step, or a run forked with [FromCheckpoint] from before it) runs the
// subgraph's thread again with the new input merged into its state, as a
// thread takes new input. The subgraph's threads are threads of the saver
// like any other: pruning the parent's thread does not delete them.
// Static breakpoints, [InterruptBefore] and [InterruptAfter], pause before
// or after named nodes, at Compile or per run; a zero input goes on.
//
// History and forks. [Thread.State] and [Thread.StateAt] load a thread's
// state, next nodes, interrupts and metadata; [Thread.History] iterates
// over its checkpoints newest first, page by page; [Thread.Update] merges
// an update into the state, and with [AsNode] as if that node had
// returned it, routing from that node. [FromCheckpoint] runs from an earlier
// checkpoint: the run's checkpoints start a new branch whose first parent
// is that checkpoint, and the old branch stays as it was. [ContinueFrom]
// runs on from the state Thread.State just returned without reading it
// again, and fails with checkpoint.ErrConflict if the thread moved on
// since. Retention
// (deleting threads, keeping the newest N checkpoints, a TTL) is the
// saver's: see package checkpoint.
//
// The loop was designed for this: between two steps the whole run is the
// state, the step number, the next tasks and the pending triggers (with
// the edges that triggered them, which a join's wait depends on); task ids
// are deterministic (see [TaskInfo.ID]); the engine knows which fields
// each step wrote (one bit per handle). A graph without a checkpointer
// pays nothing for any of it.
//
// # Compared with LangGraph and eino
//
// LangGraph compiles each state key into a channel object and routes every
// write through channel bookkeeping and per-step config plumbing; that is
// what makes a step cost about 1 ms of CPU in LangGraph.js (see
// BENCHMARKS.md). Its model is kept here: per-key reducers with one write
// per step for keys without one, super-steps with a barrier, Send,
// Command, conditional edges with declared targets, subgraphs, stream
// modes. What changes: state is a Go struct and reducers are typed handles
// the compiler checks, instead of TypedDict annotations checked at run
// time; an update is a value, not a dict; parallel writes merge in
// declaration order, which is documented and stable, rather than sorted by
// task-path string (LangGraph.js orders w10 before w2); a join after uneven
// branches waits without a special join edge; routes to undeclared targets
// are errors, not silent surprises.
//
// cloudwego/eino types each node as I -> O and checks edges when the graph
// is built, which suits pipelines but not agents sharing one evolving
// state: its shared state lives behind handlers and a mutex, and fan-in
// merges by a process-global registry keyed by Go type, in an order that
// varies from run to run. Here the shared state is the graph's type, each
// field merges by its own declared reducer, the merge order is fixed, and
// Send-style fan-out with a typed payload is built in.
//
// # Performance
//
// On the sequential path a step makes no allocation of its own: the run's
// buffers are pooled, a lone node runs inline, routing compares declared
// target names and merging calls one typed function per written field. A
// parallel step starts one goroutine per task (or per worker, when
// concurrency is bounded) sharing one closure. BENCHMARKS.md has the
// figures beside LangGraph.js, eino and a hand-written baseline.
package graph
