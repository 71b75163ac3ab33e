// Package checkpoint stores the checkpoints of graph runs, so that a run can
// survive a restart, pause for a human and be inspected or rewound later.
//
// # Model
//
// A thread is one durable conversation or job. After every super-step the
// engine saves a [Checkpoint] of the thread: its ID, its parent, the step
// number, the version of every state channel, the nodes that ran, the tasks
// scheduled next, the interrupts it waits on, and metadata. The state itself
// is held in named channels (one per state field), each with a version that
// grows when the channel changes.
//
// Channel values live in blobs, and a checkpoint stores only the blobs of the
// channels whose version changed in its step. An unchanged channel refers to
// the blob of an earlier checkpoint, so a field that never changes is stored
// once however long the thread runs. A [Blob] is either a [Full] value or a
// [Delta]: a change to the previous value, such as the messages an append
// reducer added. A thread of 1000 steps that each append one message
// therefore stores the messages once each, not the whole history at every
// step. Loading a checkpoint returns, per channel, a [Channel]: the latest full
// value and the deltas written after it, oldest first; the engine rebuilds
// the value by applying the deltas with the channel's reducer. The engine
// decides when to write a full value instead of a delta; [ChainStats] holds
// a policy that keeps the total stored bytes proportional to the data and
// the bytes read to load a channel within about twice its size.
//
// Channel names are opaque to a Saver: besides the state's fields, the
// engine may keep its own bookkeeping (pending join triggers, resume values)
// in channels of its own, and gets the same sharing and deltas for them.
//
// A changed channel's version must be above the version its parent
// checkpoint holds; an unchanged channel keeps its parent's version and has
// no blob. Put rejects anything else with an error wrapping [ErrInvalid].
//
// IDs and names (thread, checkpoint, task and interrupt IDs, channel and
// node names) are UTF-8 text without NUL bytes, at most [MaxIDLen] bytes,
// and metadata keys and values UTF-8 text without NUL bytes: what every
// backend stores as given. Every Saver refuses anything else alike, with an
// error wrapping [ErrInvalid] that names the field, when writing and when
// reading, so that an ID that works with [Memory] works with PostgreSQL.
// The engine runs a thread's subgraphs on threads named after it
// ([github.com/agentgraph/agentgraph/graph.SubgraphThread] appends "|" and
// a task ID): leave room below the limit.
//
// # Pending writes
//
// When some tasks of a step finish and the step does not complete (a crash,
// an interrupt, a failing sibling), the finished tasks' writes are saved with
// [Saver.PutWrites] against the checkpoint the step started from. A resumed
// run applies them instead of running those tasks again. When a step pauses
// (a node called Interrupt), the checkpoint listing the interrupts and the
// writes of the step's finished tasks are saved by one [Saver.Put], so a
// crash cannot keep the pause and lose the writes.
//
// # Concurrency and forks
//
// Every [Saver.Put] names the checkpoint the writer believes is the thread's
// latest. If another writer has moved the thread on, the Put stores nothing
// and fails with a [*ConflictError] (errors.Is(err, [ErrConflict])), so two
// writers can never silently fork a thread or lose an update, whether they
// are goroutines or processes sharing a database. Time travel is a Put whose
// parent is an older checkpoint while expecting the current latest one: the
// new checkpoint starts a new branch, and the old history stays as it was.
// Checkpoints are listed in the order they were saved, newest first. A
// Saver may also implement [SnapshotLister] to load a page of checkpoints
// with their data in one call; [AllSnapshots] uses it when present.
//
// # Retention
//
// [Saver.DeleteThread] deletes a thread. A backend that is a [Pruner] also
// applies retention policies: [Prune] keeps only the newest checkpoints of
// each thread and deletes threads idle for longer than a TTL. A kept
// checkpoint stays loadable: the blobs and delta chains it needs are kept
// with it. A [UsageReporter] reports the storage a thread takes
// ([ThreadUsage]).
//
// # Damaged data
//
// Loading never trusts what is stored. Every delta applies to an older
// blob, and a checkpoint refers only to blobs written at or before it, so
// loading walks each chain towards older blobs and stops; a chain that
// breaks these rules (a loop, a delta applying to itself, a blob of
// unknown kind, a missing blob) or a record that does not decode makes the
// load fail at once with a [*CorruptError] (errors.Is(err, [ErrCorrupt]))
// naming the thread and the checkpoint, without looping, waiting for a
// deadline or allocating more than a sound checkpoint would. The
// checkpoints before the damage and the other threads still load.
//
// # Serialisation
//
// A [Saver] stores bytes. The engine turns values into bytes with a
// [Serializer], [JSON] by default. Decoding always fills a value of the
// caller's own Go type; no type name is ever read from storage, so stored
// data cannot make the program build objects it did not ask for.
//
// # Backends
//
// [Memory] keeps everything in the process. The packages
// [github.com/agentgraph/agentgraph/graph/checkpoint/sqlite] (pure Go, one
// file, safe for several processes) and
// [github.com/agentgraph/agentgraph/graph/checkpoint/postgres] (pgx) are
// durable. Package
// [github.com/agentgraph/agentgraph/graph/checkpoint/checkpointtest] holds
// the conformance suite every backend passes; run it against your own Saver.
// A backend of your own can check requests with [ValidatePut],
// [ValidateWrites], [ValidateID], [ValidateMetadata] and
// [ValidateRetention], word missing checkpoints with
// [NotFoundError] and report damaged data with [CorruptError], as the
// backends here do.
package checkpoint
