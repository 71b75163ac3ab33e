// Package postgres is a checkpoint.Saver that stores checkpoints in
// PostgreSQL through pgx.
//
// Pass New a *pgxpool.Pool you manage, or a DSN for which the Saver opens
// (and Close closes) its own pool. New creates the schema's tables if needed
// and applies pending versioned migrations, recorded in the table
// agentgraph_checkpoint_migrations; an advisory lock makes processes that
// start together apply each migration once. Use Config.Schema to keep
// several applications, or tests, apart in one database.
//
// Optimistic concurrency is done in SQL: a Put moves the thread's latest
// pointer with a conditional UPDATE (or an INSERT for a new thread) in the
// same transaction as its inserts, so of two writers expecting the same
// checkpoint, in one process or in many, exactly one succeeds and the other
// gets a *checkpoint.ConflictError. Times are stored with microsecond
// precision; Put writes the stored CreatedAt back into the checkpoint.
//
// Each call costs few round trips, since each costs the database a task
// switch and the process a pair of system calls: Get is one statement (the
// checkpoint with its blob chains and pending writes, read from one
// snapshot); PutWrites is one round trip; a Put that starts a thread, or
// extends the thread's latest checkpoint as the Saver last saved or loaded
// it (Config.RecentThreads), is one statement, whose inserts happen only if
// the thread and that checkpoint are still as the Saver remembers them.
// Any other Put (a fork, a conflict, a thread another process moved on) is
// a transaction of two round trips that reads what it needs first.
//
// One-statement Puts of concurrent callers are sent together (group
// commit): a Put made while fewer than two of its kind are being sent
// goes at once, alone, under its caller's context (so one Put waiting on
// a locked row holds no other behind it); the Puts made while two are
// being sent wait for one of them and then go together, in one statement
// (in a transaction of one round trip, which runs it with its generic
// plan), at most 64 Puts and 1 MiB at a time (more go on their own, as
// do two Puts of one thread), those with the flush wait apart from those
// without (Put, PutNoSync). No Put waits for a timer. Each Put of a group
// is checked as if alone: one whose thread another process moved on
// saves nothing and goes on to the transaction that reports its
// conflict, while the others are saved; a group PostgreSQL refuses whole
// (any error the server reports: a taken checkpoint ID, a value it cannot
// hold, a deadlock, a lock or statement timeout) saved nothing, and each
// of its Puts is sent again alone. A Put whose context ends while it
// waits is not sent and returns the context's error; one whose context
// ends while its group is being sent waits for the group's outcome
// (bounded by a minute; the statement is cancelled once every caller of
// the group left), so that nothing of it is written after it returns, and
// returns an error that wraps the context's and says whether the
// checkpoint was saved.
//
// The Saver is a checkpoint.SnapshotLister: ListSnapshots, which
// checkpoint.AllSnapshots and graph.History use, reads a page of snapshots
// in one round trip (one read-only repeatable-read transaction), however
// long the page.
//
// Config.AsyncCommit turns the flush wait off for the Saver's own
// transactions; setting synchronous_commit=off on the whole pool (in the
// DSN, "postgres://user@host/db?synchronous_commit=off", or in
// pgxpool.Config.ConnConfig.RuntimeParams) does the same for everything
// the pool runs. Either way a crash of the PostgreSQL server may lose the
// Puts of its last moments (up to three times wal_writer_delay, 600 ms by
// default) although they returned nil: the thread's latest checkpoint is
// then an earlier one, and a run resumed from it repeats the steps since.
// Nothing is corrupted, and a crash of the application alone loses
// nothing. Share the setting with the stores written in the same runs
// (the agent server's Store), so that both come back as of about the same
// instant.
//
// Tables: agentgraph_threads (one row per thread: its latest checkpoint and
// when it was last written), agentgraph_checkpoints, agentgraph_blobs (the
// channel values, full or delta, shared between checkpoints) and
// agentgraph_writes (pending writes).
package postgres
